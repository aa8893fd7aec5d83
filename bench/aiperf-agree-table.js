// Prints the side-by-side table of bench/aiperf-agree.sh from its output folder:
// aiperf's profile_export_aiperf.json and portico bench's summary.json, per round and mean.
import { readFileSync } from 'node:fs';

const [dir, rounds] = process.argv.slice(2);
const rows = [
  ['TTFT mean (ms)', (a) => a.time_to_first_token.avg, (p) => p.ttftMs.mean],
  ['TTFT p50 (ms)', (a) => a.time_to_first_token.p50, (p) => p.ttftMs.p50],
  ['ITL per request mean (ms)', (a) => a.inter_token_latency.avg, (p) => p.itlPerRequestMs.mean],
  ['e2e mean (ms)', (a) => a.request_latency.avg, (p) => p.e2eMs.mean],
  ['e2e p99 (ms)', (a) => a.request_latency.p99, (p) => p.e2eMs.p99],
  ['requests/s', (a) => a.request_throughput.avg, (p) => p.requestsPerS],
  ['output tokens/s', (a) => a.output_token_throughput.avg, (p) => p.outputTokensPerS],
];
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
const a = [];
const p = [];
for (let r = 1; r <= Number(rounds); r++) {
  a.push(JSON.parse(readFileSync(`${dir}/aiperf-${r}/profile_export_aiperf.json`, 'utf8')));
  p.push(JSON.parse(readFileSync(`${dir}/portico-${r}/summary.json`, 'utf8')));
}
console.log(`| figure | aiperf (${rounds} runs) | portico bench (${rounds} runs) | difference |`);
console.log('|---|---|---|---|');
for (const [name, fa, fp] of rows) {
  const va = a.map(fa);
  const vp = p.map(fp);
  const ma = mean(va);
  const mp = mean(vp);
  const f = (xs) => xs.map((x) => x.toFixed(2)).join(' / ');
  console.log(`| ${name} | ${f(va)} (mean ${ma.toFixed(2)}) | ${f(vp)} (mean ${mp.toFixed(2)}) | ${(((mp - ma) / ma) * 100).toFixed(1)}% |`);
}
