// req/s with 1 and with 2 server shards (--shards), measured in one run, rounds
// interleaved (1, 2, 1, 2, …) so machine noise hits both alike: GET /v1/models and a
// short non-streaming chat (max_tokens 1) on the echo engine. wrk, the shards and the
// embedded mock engines all share the machine's cores.
//
// Usage: npm run build:ts && node dist/bench/shards.bench.js [seconds=5] [connections=64] [rounds=2]
// Needs `wrk` (Debian package). Every load targets 127.0.0.1 and stops by itself.

import { once } from 'node:events';
import { cpus, loadavg } from 'node:os';
import { QWEN3, cpuMsOf, postScript, startPortico, wrk as runWrk, type WrkRun } from './wrk-harness.js';

const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 64);
const rounds = Number(process.argv[4] ?? 2);

function start(shards: number) {
  return startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '2', '--shards', String(shards)]);
}

interface Run extends WrkRun {
  /** Server process CPU (every thread, mock engines included) during the run. */
  cpuMs: number;
}

function measured(pid: number, run: () => WrkRun): Run {
  const c0 = cpuMsOf(pid);
  const r = run();
  return { ...r, cpuMs: cpuMsOf(pid) - c0 };
}

const wrk = (url: string, script?: string, secs = seconds): WrkRun => runWrk(url, { connections, seconds: secs, script });

const chatLua = postScript({ model: 'm', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 1 });

const results: Record<string, Run[]> = {};
const add = (k: string, r: Run) => (results[k] ??= []).push(r);
const load: string[] = [`before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`];

for (let round = 0; round < rounds; round++) {
  for (const shards of [1, 2]) {
    const s = await start(shards);
    const base = `http://127.0.0.1:${s.port}`;
    wrk(`${base}/v1/chat/completions`, chatLua, 1); // warm-up
    add(`${shards}|models`, measured(s.child.pid!, () => wrk(`${base}/v1/models`)));
    add(`${shards}|chat`, measured(s.child.pid!, () => wrk(`${base}/v1/chat/completions`, chatLua)));
    s.child.kill('SIGTERM');
    await once(s.child, 'exit');
  }
}
load.push(`after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`\n${cpus().length} cores (${cpus()[0]!.model}), Node ${process.version}, wrk -t1 -c${connections} -d${seconds}s, ${rounds} interleaved rounds; loadavg ${load.join(', ')}\n`);
console.log('| target | shards | req/s per round | p50 / p99 per round | server CPU µs per request | median req/s 2 shards / 1 shard |\n|---|---:|---|---|---|---:|');
for (const what of ['models', 'chat']) {
  const one = results[`1|${what}`]!;
  for (const shards of [1, 2]) {
    const rs = results[`${shards}|${what}`]!;
    const ratio = shards === 2 ? (median(rs.map((r) => r.rps)) / median(one.map((r) => r.rps))).toFixed(2) : '';
    const name = what === 'models' ? 'GET /v1/models' : 'chat unary, max_tokens 1';
    const cpu = rs.map((r) => ((r.cpuMs * 1000) / r.requests).toFixed(0)).join(', ');
    console.log(`| ${name} | ${shards} | ${rs.map((r) => r.rps.toFixed(0)).join(', ')} | ${rs.map((r) => `${r.p50} / ${r.p99}`).join(', ')} | ${cpu} | ${ratio} |`);
  }
}
process.exit(0);
