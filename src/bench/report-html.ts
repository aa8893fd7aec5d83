// DIR/report.html: one self-contained page (inline SVG charts, no script, no external file)
// with the run's configuration, a table of the figures per cell and the charts.

import type { Stats } from './histogram.js';
import type { Measures } from './measures.js';
import type { BenchResult } from './result.js';
import { reportCharts } from './report-charts.js';
import { svgChart } from './svg-chart.js';

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const STATS: [keyof Measures, string][] = [
  ['ttftMs', 'TTFT'],
  ['ttfoMs', 'TTFO (first non-reasoning output)'],
  ['tpotMs', 'TPOT = ITL per request'],
  ['itlPerGapMs', 'ITL per gap'],
  ['e2eMs', 'end to end'],
];

function statsTable(m: Measures): string {
  const rows = STATS.filter(([k]) => m[k]).map(([k, name]) => {
    const s = m[k] as Stats;
    return `<tr><th>${name}</th>${[s.mean, s.p50, s.p90, s.p95, s.p99, s.max].map((v) => `<td>${v.toFixed(2)}</td>`).join('')}<td>${s.count}</td></tr>`;
  });
  return `<table><tr><th>ms</th><th>mean</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>max</th><th>n</th></tr>${rows.join('')}</table>`;
}

function totals(m: Measures): string {
  const errors = Object.entries(m.errors).map(([k, n]) => `${k}: ${n}`).join(', ') || 'none';
  const goodput = m.goodput ? `<li>goodput ${m.goodput.requestsPerS} req/s (${(100 * m.goodput.fraction).toFixed(1)}% of requests met ${esc(Object.entries(m.goodput.slo).map(([k, v]) => `${k.replace(/Ms$/, '')} ≤ ${v} ms`).join(', '))})</li>` : '';
  return `<ul><li>${m.requests} requests (${m.failed} failed; errors: ${esc(errors)}) in ${m.durationS} s</li><li>${m.requestsPerS} req/s, ${m.outputTokensPerS} output tokens/s</li><li>prompt tokens ${m.promptTokens} (${m.cachedTokens} cached), output tokens ${m.outputTokens} (${m.reasoningTokens} reasoning)</li>${goodput}${m.firstError ? `<li>first error: <code>${esc(m.firstError)}</code></li>` : ''}</ul>`;
}

export function reportHtml(res: BenchResult): string {
  const c = res.config;
  const cap = (n: number) => (n >= Number.MAX_SAFE_INTEGER ? 'no cap' : `at most ${n} in flight`);
  const load = c.sweep
    ? `sweep of ${c.sweep.param === 'concurrency' ? 'concurrency (closed loop)' : `rate (open loop, req/s, ${cap(c.load.kind === 'open' ? c.load.maxConcurrency : Number.MAX_SAFE_INTEGER)})`}: ${c.sweep.values.join(', ')}`
    : c.load.kind === 'closed'
      ? `closed loop, concurrency ${c.load.concurrency}`
      : `open loop, ${c.load.rate} req/s (${cap(c.load.maxConcurrency)})`;
  const workload = c.workload.dataset
    ? `dataset ${esc(c.workload.dataset)}`
    : `synthetic: ${c.workload.inputTokens} input tokens (${c.workload.sharedPrefix} shared over ${c.workload.prefixes} prefixes), ${c.workload.outputTokens} output tokens, ${c.workload.turns} turn(s) per session`;
  const cells = res.cells
    .map((cell) => `<section><h2>${cell.cell ? esc(Object.entries(cell.cell).map(([k, v]) => `${k} ${v}`).join(', ')) : 'Results'}</h2>${totals(cell.measures)}${statsTable(cell.measures)}</section>`)
    .join('\n');
  const charts = reportCharts(res).map((ch) => `<figure>${svgChart(ch)}</figure>`).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>portico bench: ${esc(c.target.model)} at ${esc(c.target.url)}</title>
<style>
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 24px; color: #222; max-width: 1600px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child { text-align: left; }
figure { display: inline-block; margin: 8px; border: 1px solid #ddd; }
code { background: #f4f4f4; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; }
</style></head><body>
<h1>portico bench</h1>
<p>${esc(c.target.url)} · model <b>${esc(c.target.model)}</b> · ${c.target.endpoint} · ${c.target.stream ? 'streamed' : 'not streamed'} · ${esc(load)} · ${workload} · started ${esc(res.startedAt)}</p>
${cells}
<h2>Charts</h2>
${charts}
<h2>Definitions</h2>
<dl>
<dt>TTFT</dt><dd>time to the first chunk with content, reasoning or a tool-call delta</dd>
<dt>TTFO</dt><dd>time to the first chunk with non-reasoning output</dd>
<dt>TPOT = ITL per request</dt><dd>(end to end − TTFT) / (output tokens − 1), per request (aiperf and guidellm call it ITL)</dd>
<dt>ITL per gap</dt><dd>every gap between two output chunks of a stream (vLLM's ITL)</dd>
</dl>
</body></html>
`;
}
