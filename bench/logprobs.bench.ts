// What logprobs and the structured-output fields cost on the chat path, measured in one run
// against a baseline request without them: `portico serve --worker` (one HTTP shard) in
// front of two `portico mock-engine --mode echo` processes, wrk on loopback, Portico's CPU
// per request from /proc/<pid>/stat (utime + stime; the engines are other processes, so
// their cost of producing logprobs is not counted). Variants: baseline; a constraint and a logit
// bias (request reading and engine mapping only); logprobs; logprobs with 5 alternatives
// (engine → tap → per-token JSON); the same streamed.
//
// Usage: npm run build:ts && node dist/bench/logprobs.bench.js [seconds=5] [connections=32]

import { cpus, loadavg } from 'node:os';
import { QWEN3, cpuMsOf, postScript, startPortico, wrk as runWrk } from './wrk-harness.js';

const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 32);

function wrk(url: string, script: string, pid: number) {
  const before = cpuMsOf(pid);
  const r = runWrk(url, { connections, seconds, script });
  return { rps: r.rps, p50: r.p50, cpuPerReq: (cpuMsOf(pid) - before) / r.requests };
}

const engines = await Promise.all([0, 1].map(() => startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--mode', 'echo'])));
const portico = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--shards', '1', ...engines.flatMap((e) => ['--worker', `grpc://127.0.0.1:${e.port}`])]);
const url = `http://127.0.0.1:${portico.port}/v1/chat/completions`;
const text = 'Summarise the following in one sentence: the quick brown fox jumps over the lazy dog while the cat watches from the warm windowsill.';
const chat = { model: 'm', messages: [{ role: 'user', content: text }], max_tokens: 32, ignore_eos: true };
const variants: [string, object][] = [
  ['baseline (no logprobs), unary', chat],
  ['+ guided_json and logit_bias, unary', { ...chat, guided_json: { type: 'object' }, logit_bias: { '100': 1, '200': -1 } }],
  ['+ logprobs, unary', { ...chat, logprobs: true }],
  ['+ logprobs, top_logprobs 5, unary', { ...chat, logprobs: true, top_logprobs: 5 }],
  ['baseline, stream', { ...chat, stream: true }],
  ['+ logprobs, top_logprobs 5, stream', { ...chat, stream: true, logprobs: true, top_logprobs: 5 }],
];
// Warm-up.
wrk(url, postScript(chat), portico.child.pid!);
const rows = variants.map(([name, body]) => [name, wrk(url, postScript(body), portico.child.pid!)] as const);
portico.child.kill();
for (const e of engines) e.child.kill();

console.log(`\n${cpus().length} cores (${cpus()[0].model}), Node ${process.version}, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}, wrk -t1 -c${connections} -d${seconds}s, 32 completion tokens\n`);
console.log('| variant | req/s | p50 | server CPU/request | CPU vs baseline |\n|---|---:|---:|---:|---:|');
const baseUnary = rows[0][1].cpuPerReq;
const baseStream = rows[4][1].cpuPerReq;
rows.forEach(([name, r], i) => {
  const base = i >= 4 ? baseStream : baseUnary;
  console.log(`| ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.cpuPerReq.toFixed(2)} ms | ${(r.cpuPerReq / base).toFixed(2)}× |`);
});
process.exit(0);
