// The markdown table of bench/compare, and its place in bench/RESULTS.md (between two marker
// comments, so a new run replaces the old table and nothing else).

import type { Workload } from './workloads.js';

export interface Cell {
  value: number;
  failed?: number;
  /** A rate search where even this rate (the lowest tried) failed: the answer is "< below". */
  below?: number;
}

export const BEGIN = '<!-- bench:compare begin -->';
export const END = '<!-- bench:compare end -->';

const ROWS: [string, string, number][] = [
  ['idleRssMb', 'RSS idle (MB)', 0],
  ['unary.cpuPerRequestUs', 'CPU per 1-token request (µs)', 0],
  ['unary.rps', '1-token requests/s, 32 in flight', 0],
  ['unary.e2eP99', '1-token e2e p99 (ms), 32 in flight', 2],
  ['stream.cpuPerTokenUs', 'CPU per streamed token (µs), 64-token streams', 1],
  ['ttft1.ttftP50', 'TTFT p50 (ms), 1 in flight', 2],
  ['ttft1.ttftP99', 'TTFT p99 (ms), 1 in flight', 2],
  ['streams256.e2eP99', '256 concurrent streams: e2e p99 (ms)', 1],
  ['streams256.maxRssMb', '256 concurrent streams: RSS max (MB)', 0],
  ['long.cpuPerRequestUs', 'CPU per 8k-in/64-out request (µs)', 0],
  ['long.ttftP50', '8k prompt TTFT p50 (ms)', 2],
  ['rate.rps', '1-token req/s at e2e p99 < 10 ms (rate search, delivered)', 0],
  ['rate.e2eP99', '  e2e p99 at that rate (ms)', 2],
  ['rate.ceiling', '  lowest rate that failed (req/s offered)', 0],
  ['rate.ceilingP99', '  e2e p99 at that failing rate (ms)', 2],
  ['tools.cpuPerRequestUs', 'tool-calling chat, parser on: CPU per request (µs)', 0],
  ['tools.cpuPerTokenUs', 'tool-calling chat, parser on: CPU per streamed token (µs)', 1],
  ['tools.ttftP50', 'tool-calling chat, parser on: TTFT p50 (ms), 16 in flight', 2],
  ['tools.e2eP99', 'tool-calling chat, parser on: e2e p99 (ms), 16 in flight', 1],
];

function fmt(all: Cell[], digits: number): string {
  if (!all.length) return '—';
  const xs = all.filter((c) => c.below === undefined);
  const below = all.filter((c) => c.below !== undefined).map((c) => c.below as number);
  const none = below.length ? `< ${Math.min(...below)}${xs.length ? ` in ${below.length} round(s)` : ''}` : '';
  if (!xs.length) return none;
  const v = xs.map((c) => c.value);
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  const failed = xs.reduce((a, c) => a + (c.failed ?? 0), 0);
  const range = v.length > 1 ? ` (${Math.min(...v).toFixed(digits)}–${Math.max(...v).toFixed(digits)})` : '';
  return `${mean.toFixed(digits)}${range}${failed ? ` ⚠ ${failed} failed` : ''}${none ? `; ${none}` : ''}`;
}

export function renderTable(workloads: Workload[], results: Map<string, Record<string, Cell>[]>, failures: Map<string, string>, meta: { rounds: number; machine: string; toolFailures?: Map<string, string> }): string {
  const names = [...new Set([...results.keys(), ...failures.keys()])];
  const lines = [
    `${meta.rounds} interleaved round(s); ${meta.machine}. Frontend CPU is its process tree's utime + stime from /proc over the workload; load from \`portico bench\`; engine: Portico's mock engine (sim, speedup 1e6) out of process for Portico and SMG.`,
    '',
    `| figure | ${names.join(' | ')} |`,
    `|---|${names.map(() => '---').join('|')}|`,
  ];
  for (const [key, title, digits] of ROWS) {
    lines.push(`| ${title} | ${names.map((n) => (failures.has(n) && !results.has(n) ? 'did not run' : fmt((results.get(n) ?? []).map((r) => r[key]).filter(Boolean), digits))).join(' | ')} |`);
  }
  for (const [n, why] of failures) lines.push('', `${n} did not run: ${why.replace(/\n/g, ' ')}`);
  for (const [n, why] of meta.toolFailures ?? []) lines.push('', `${n} with its tool-call parser did not run: ${why.replace(/\n/g, ' ')}`);
  lines.push('', `Workloads: ${workloads.map((w) => `${w.key} = ${w.title} (\`${w.args.join(' ')}\`)`).join('; ')}.`);
  return `${lines.join('\n')}\n`;
}

/** RESULTS.md with the text between the markers replaced (the markers appended when absent). */
export function replaceSection(doc: string, table: string): string {
  const block = `${BEGIN}\n${table}${END}`;
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a >= 0 && b > a) return doc.slice(0, a) + block + doc.slice(b + END.length);
  return `${doc.replace(/\n*$/, '\n')}\n${block}\n`;
}
