// The report's charts: latency CDFs (the main chart of a single run, also report.png), TTFT
// over the run, and for a sweep throughput and latency against the swept value (the main
// chart of a sweep).

import type { BenchResult } from './result.js';
import type { Chart, Series } from './svg-chart.js';

function cellName(cell: Record<string, number> | null): string {
  if (!cell) return 'run';
  const [k, v] = Object.entries(cell)[0];
  return `${k} ${v}`;
}

function latencyCdf(res: BenchResult): Chart {
  const series: Series[] = [];
  if (res.cells.length === 1) {
    const h = res.cells[0].histograms;
    for (const [name, hist] of [['TTFT', h.ttft], ['TPOT', h.tpot], ['ITL per gap', h.itlGap], ['end to end', h.e2e]] as const) {
      if (hist.count) series.push({ name, points: hist.cdf() });
    }
  } else {
    for (const c of res.cells) {
      const hist = c.histograms.ttft.count ? c.histograms.ttft : c.histograms.e2e;
      series.push({ name: `${c.histograms.ttft.count ? 'TTFT' : 'e2e'}, ${cellName(c.cell)}`, points: hist.cdf() });
    }
  }
  return { title: res.cells.length === 1 ? 'Latency CDFs' : 'TTFT CDF per sweep cell', xLabel: 'latency (ms, log scale)', yLabel: 'fraction of requests ≤ x', series, logX: true, yRange: [0, 1] };
}

function ttftOverTime(res: BenchResult): Chart {
  const streamed = res.cells.some((c) => c.histograms.ttft.count > 0);
  let offset = 0;
  const series: Series[] = res.cells.map((c) => {
    const points = c.records.filter((r) => r.ok).map((r) => [(offset + r.startMs) / 1000, streamed ? (r.ttftMs ?? NaN) : r.e2eMs] as [number, number]);
    offset += c.measures.durationS * 1000;
    return { name: cellName(c.cell), points, style: 'dots' as const };
  });
  return { title: streamed ? 'TTFT over the run' : 'End-to-end latency over the run', xLabel: 'request sent at (s since the measured phase began)', yLabel: streamed ? 'TTFT (ms)' : 'e2e (ms)', series };
}

function sweepCharts(res: BenchResult): Chart[] {
  const param = res.config.sweep!.param;
  const x = (c: (typeof res.cells)[number]) => c.cell![param];
  const xLabel = param === 'concurrency' ? 'concurrency (requests in flight)' : 'request rate (req/s)';
  const throughput: Chart = {
    title: `Throughput vs ${param}`,
    xLabel,
    yLabel: 'output tokens/s',
    series: [{ name: 'output tokens/s', points: res.cells.map((c) => [x(c), c.measures.outputTokensPerS]) }],
  };
  const pick = (c: (typeof res.cells)[number]) => c.measures.ttftMs ?? c.measures.e2eMs;
  const latency: Chart = {
    title: `${res.cells[0].measures.ttftMs ? 'TTFT' : 'End-to-end latency'} vs ${param}`,
    xLabel,
    yLabel: 'ms',
    series: [
      { name: 'p50', points: res.cells.map((c) => [x(c), pick(c)?.p50 ?? NaN]) },
      { name: 'p99', points: res.cells.map((c) => [x(c), pick(c)?.p99 ?? NaN]) },
    ],
  };
  return [throughput, latency];
}

/** The charts of the report, the main one first. */
export function reportCharts(res: BenchResult): Chart[] {
  if (res.config.sweep) return [...sweepCharts(res), latencyCdf(res), ttftOverTime(res)];
  return [latencyCdf(res), ttftOverTime(res)];
}
