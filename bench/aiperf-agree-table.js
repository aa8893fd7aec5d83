// Prints the side-by-side table of bench/aiperf-agree.sh from its output folder:
// aiperf's profile_export_aiperf.json and portico bench's summary.json, per round and mean;
// then figures both tools' per-request files give the same way (aiperf's
// profile_export.jsonl, profiling phase; bench's requests.jsonl), which explain where the two
// differ: how much load each offered (requests in flight on average, and in closed loop the
// idle time of a slot between one answer's end and the next send), and aiperf's own time to
// write a request, which its TTFT includes.
//   node bench/aiperf-agree-table.js DIR ROUNDS [CONCURRENCY]   (no CONCURRENCY: open loop)
import { readFileSync } from 'node:fs';

const [dir, rounds, conc] = process.argv.slice(2);
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
const lines = (f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

/** Per-request [start ms, end ms, ttft ms, aiperf's request-writing ms or 0] of one run. */
function aiperfRequests(r) {
  return lines(`${dir}/aiperf-${r}/profile_export.jsonl`)
    .filter((x) => x.metadata.benchmark_phase === 'profiling')
    .map((x) => [x.metadata.request_start_ns / 1e6, x.metadata.request_end_ns / 1e6, x.metrics.time_to_first_token?.value ?? NaN, x.metrics.http_req_sending?.value ?? NaN]);
}
function benchRequests(r) {
  return lines(`${dir}/portico-${r}/requests.jsonl`)
    .filter((x) => x.ok)
    .map((x) => [x.startMs, x.startMs + x.e2eMs, x.ttftMs, 0]);
}
const span = (q) => Math.max(...q.map((x) => x[1])) - Math.min(...q.map((x) => x[0]));
const busy = (q) => q.reduce((s, x) => s + (x[1] - x[0]), 0);
const derived = [
  ['in flight on average (Σ e2e / first send → last end)', (q) => busy(q) / span(q)],
  ...(conc ? [['idle slot time per request (ms): (concurrency × span − Σ e2e) / requests', (q) => (Number(conc) * span(q) - busy(q)) / q.length]] : []),
  ['request writing inside TTFT, mean (ms): aiperf http_req_sending, bench 0 (not split out)', (q) => mean(q.map((x) => x[3]))],
  ['TTFT mean minus that writing time (ms)', (q) => mean(q.map((x) => x[2] - x[3]))],
];
const rows = [
  ['TTFT mean (ms)', (a) => a.time_to_first_token.avg, (p) => p.ttftMs.mean],
  ['TTFT p50 (ms)', (a) => a.time_to_first_token.p50, (p) => p.ttftMs.p50],
  ['ITL per request mean (ms)', (a) => a.inter_token_latency.avg, (p) => p.itlPerRequestMs.mean],
  ['e2e mean (ms)', (a) => a.request_latency.avg, (p) => p.e2eMs.mean],
  ['e2e p99 (ms)', (a) => a.request_latency.p99, (p) => p.e2eMs.p99],
  ['requests/s', (a) => a.request_throughput.avg, (p) => p.requestsPerS],
  ['output tokens/s', (a) => a.output_token_throughput.avg, (p) => p.outputTokensPerS],
];
const a = [];
const p = [];
const aq = [];
const pq = [];
for (let r = 1; r <= Number(rounds); r++) {
  a.push(JSON.parse(readFileSync(`${dir}/aiperf-${r}/profile_export_aiperf.json`, 'utf8')));
  p.push(JSON.parse(readFileSync(`${dir}/portico-${r}/summary.json`, 'utf8')));
  aq.push(aiperfRequests(r));
  pq.push(benchRequests(r));
}
const f = (xs) => xs.map((x) => x.toFixed(2)).join(' / ');
const row = (name, va, vp) => {
  const ma = mean(va);
  const mp = mean(vp);
  const diff = Math.abs(ma) > 1e-9 ? `${(((mp - ma) / ma) * 100).toFixed(1)}%` : '—';
  console.log(`| ${name} | ${f(va)} (mean ${ma.toFixed(2)}) | ${f(vp)} (mean ${mp.toFixed(2)}) | ${diff} |`);
};
console.log(`| figure | aiperf (${rounds} runs) | portico bench (${rounds} runs) | difference |`);
console.log('|---|---|---|---|');
for (const [name, fa, fp] of rows) row(name, a.map(fa), p.map(fp));
for (const [name, fn] of derived) row(name, aq.map(fn), pq.map(fn));
