// Frontend CPU per request of a unary 1-token chat, A/B between builds in one run.
// One `portico mock-engine` (echo, zero delay) is shared; each build directory (a copy of the
// repo's bin/ and dist/ with build/, native/, node_modules/ linked) runs its own one-shard
// `serve` pointing at it, and wrk loads them in turn, round after round, so both see the same
// machine load. CPU per request is the serve process's utime+stime over the requests wrk made.
//
// Usage: npm run build:ts && node dist/bench/chat-cpu-ab.bench.js <dirA> <dirB> [more dirs...] [rounds=3] [seconds=5] [connections=64]
// BENCH_PIN=1: the frontend under test on CPU 0, engines and wrk on CPU 1 (wrk-harness.ts).
// BENCH_ARGS_A / BENCH_ARGS_B ...: extra `serve` flags for that side (space-separated), e.g.
// the same build twice with BENCH_ARGS_B='--rate-limits [{"key":"*","requests-per-minute":2000000000}]'
// (no spaces inside a value).
// (a directory of '.' means this repo; more than two directories, e.g. the merges of a bisect,
// are loaded in turn the same way and each is reported against A). Needs `wrk`.

import { resolve as resolvePath } from 'node:path';
import { medianOf, postScript, QWEN3, ROOT, startPortico, stopInOrder, uptime, wrkRounds, ZERO_DELAY } from './wrk-harness.js';

const args = process.argv.slice(2);
const firstNumber = args.findIndex((a) => /^\d+$/.test(a));
const dirArgs = firstNumber < 0 ? args : args.slice(0, firstNumber);
const numbers = firstNumber < 0 ? [] : args.slice(firstNumber);
const dirs = (dirArgs.length < 2 ? [...dirArgs, '.', '.'].slice(0, 2) : dirArgs).map((d) => resolvePath(d === '.' ? ROOT : d));
const names = dirs.map((_, i) => String.fromCharCode(65 + i));
const rounds = Number(numbers[0] ?? 3);
const seconds = Number(numbers[1] ?? 5);
const connections = Number(numbers[2] ?? 64);

const engine = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', ...ZERO_DELAY]);
const worker = `grpc://127.0.0.1:${engine.port}`;
const servers = [];
for (const [i, dir] of dirs.entries()) {
  const name = names[i];
  const extra = (process.env[`BENCH_ARGS_${name}`] ?? '').split(' ').filter((a) => a !== '');
  const s = await startPortico(['serve', '--host', '127.0.0.1', '--http-port', '0', '--model-path', QWEN3, '--model-name', 'models', '--worker', worker, '--shards', '1', ...extra], dir);
  servers.push({ name, dir, ...s });
}
const script = postScript({ model: 'models', messages: [{ role: 'user', content: 'Hello there, how are you today?' }], max_tokens: 1 });
console.log(`${dirs.map((d, i) => `${names[i]} = ${d} ${process.env[`BENCH_ARGS_${names[i]}`] ?? ''}`).join('\n')}\n${rounds} rounds, wrk -t1 -c${connections} -d${seconds}s after a 2 s warm-up; load: ${uptime()}`);
console.log('| round | build | req/s | p50 | p99 | frontend CPU / req |\n|---|---|---:|---:|---:|---:|');
try {
  const perReq = wrkRounds(servers, rounds, { connections, seconds, script });
  const med = medianOf;
  const a = med(perReq.A);
  console.log(`median CPU/req: ${names.map((n) => `${n} ${Math.round(med(perReq[n]))} µs`).join(', ')}; ${names.slice(1).map((n) => `${n}/A ${(med(perReq[n]) / a).toFixed(3)}`).join(', ')}`);
  console.log(`load after: ${uptime()}`);
} finally {
  await stopInOrder([...servers.map((s) => s.child), engine.child]);
}
