// Render the router workload figures (bench/router-workload.json, written by
// router-workload.bench.ts) as an SVG bar chart and convert it to PNG with
// rsvg-convert (apt-get install -y librsvg2-bin).
//
//   node dist/bench/router-plot.js [IN.json] [OUT.png]

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const inFile = process.argv[2] ?? `${ROOT}bench/router-workload.json`;
const outPng = process.argv[3] ?? `${ROOT}bench/router-workload.png`;

interface Summary {
  mode: string;
  ttftP50: number;
  ttftP99: number;
  rps: number;
  hitRate: number;
}

const data = JSON.parse(readFileSync(inFile, 'utf8')) as { summary: Summary[]; config: { WORKERS: number; SESSIONS: number; TURNS: number } };
const COLORS: Record<string, string> = { kv: '#2b7bba', 'round-robin': '#e08a2c', random: '#9a9a9a' };
const panels: { title: string; value: (s: Summary) => number; fmt: (v: number) => string; better: string }[] = [
  { title: 'TTFT p50 (ms)', value: (s) => s.ttftP50, fmt: (v) => v.toFixed(0), better: 'lower is better' },
  { title: 'TTFT p99 (ms)', value: (s) => s.ttftP99, fmt: (v) => v.toFixed(0), better: 'lower is better' },
  { title: 'Throughput (requests/s)', value: (s) => s.rps, fmt: (v) => v.toFixed(1), better: 'higher is better' },
  { title: 'Cache hit rate (%)', value: (s) => s.hitRate * 100, fmt: (v) => v.toFixed(0), better: 'higher is better' },
];

const W = 1000;
const H = 380;
const pw = W / panels.length;
const top = 70;
const bottom = 60;
const ph = H - top - bottom;
let svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans, sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n`;
const c = data.config;
svg += `<text x="${W / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">Router modes on ${c.WORKERS} simulated workers: ${c.SESSIONS} sessions × ${c.TURNS} turns, shared prefixes</text>\n`;
panels.forEach((p, i) => {
  const x0 = i * pw;
  const vals = data.summary.map(p.value);
  const max = Math.max(...vals) * 1.15 || 1;
  svg += `<text x="${x0 + pw / 2}" y="${top - 22}" text-anchor="middle" font-size="14" font-weight="bold">${p.title}</text>\n`;
  svg += `<text x="${x0 + pw / 2}" y="${top - 6}" text-anchor="middle" font-size="11" fill="#666">${p.better}</text>\n`;
  svg += `<line x1="${x0 + 20}" y1="${top + ph}" x2="${x0 + pw - 20}" y2="${top + ph}" stroke="#333"/>\n`;
  const bw = (pw - 60) / data.summary.length;
  data.summary.forEach((s, j) => {
    const v = vals[j]!;
    const h = (v / max) * ph;
    const bx = x0 + 30 + j * bw + 6;
    svg += `<rect x="${bx}" y="${top + ph - h}" width="${bw - 12}" height="${h}" fill="${COLORS[s.mode] ?? '#555'}"/>\n`;
    svg += `<text x="${bx + (bw - 12) / 2}" y="${top + ph - h - 5}" text-anchor="middle" font-size="12">${p.fmt(v)}</text>\n`;
    svg += `<text x="${bx + (bw - 12) / 2}" y="${top + ph + 16}" text-anchor="middle" font-size="11">${s.mode}</text>\n`;
  });
});
svg += '</svg>\n';
const svgFile = join(tmpdir(), 'router-workload.svg');
writeFileSync(svgFile, svg);
execFileSync('rsvg-convert', ['-o', outPng, svgFile]);
console.log(`wrote ${outPng}`);
