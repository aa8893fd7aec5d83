// DIR/report.png: the report's main chart rendered without a browser (npm @resvg/resvg-js,
// a Rust SVG renderer with prebuilt binaries; text uses the system's fonts, DejaVu on Debian).

import { Resvg } from '@resvg/resvg-js';
import type { BenchResult } from './result.js';
import { reportCharts } from './report-charts.js';
import { svgChart } from './svg-chart.js';

export function reportPng(res: BenchResult): Buffer {
  const svg = svgChart({ ...reportCharts(res)[0], width: 900, height: 480 });
  return new Resvg(svg, { background: '#ffffff', font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' } }).render().asPng();
}
