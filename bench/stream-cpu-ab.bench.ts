// Frontend CPU per streamed token, A/B between builds in one run. One sim
// `portico mock-engine` (zero delay, no EOS: every stream runs to max_tokens) is shared; each
// build runs its own one-shard `serve` against it. wrk loads them in turn, round after round,
// with streamed chats of 1 and of T tokens; the serve process's utime+stime per request
// (from /proc) gives the per-token figure as the slope (cpu(T) − cpu(1)) / (T − 1), which
// leaves out the fixed cost of a request. Then time to first token: sequential streamed
// requests from a raw socket, the time from writing the request to the first content delta.
//
// Usage: npm run build:ts && node dist/bench/stream-cpu-ab.bench.js <dirA> <dirB> [rounds=3] [seconds=5] [connections=64] [tokens=64]
// BENCH_PIN=1: the frontend under test on CPU 0, engines and wrk on CPU 1 (wrk-harness.ts).
// BENCH_ARGS_A / BENCH_ARGS_B: extra `serve` flags for that side (space-separated), e.g. the
// same build twice with BENCH_ARGS_B='--stream-write-interval-ms 2'.
// (a directory of '.' means this repo). Needs `wrk`.

import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { resolve as resolvePath } from 'node:path';
import { cpuMsOf, postScript, QWEN3, ROOT, startPortico, stopInOrder, uptime, wrk, ZERO_DELAY } from './wrk-harness.js';

const [dirA, dirB] = [process.argv[2], process.argv[3]].map((d) => resolvePath(d === '.' || !d ? ROOT : d));
const rounds = Number(process.argv[4] ?? 3);
const seconds = Number(process.argv[5] ?? 5);
const connections = Number(process.argv[6] ?? 64);
const tokens = Number(process.argv[7] ?? 64);

const engine = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--mode', 'sim', ...ZERO_DELAY, '--eos-probability', '0', '--max-num-seqs', '4096']);
const worker = `grpc://127.0.0.1:${engine.port}`;
const servers: { name: string; dir: string; child: ChildProcess; port: number }[] = [];
for (const [name, dir] of [['A', dirA], ['B', dirB]] as const) {
  const extra = (process.env[`BENCH_ARGS_${name}`] ?? '').split(' ').filter((a) => a !== '');
  const s = await startPortico(['serve', '--host', '127.0.0.1', '--http-port', '0', '--model-path', QWEN3, '--model-name', 'models', '--worker', worker, '--shards', '1', ...extra], dir);
  servers.push({ name, dir, ...s });
}
const body = (t: number) => ({ model: 'models', messages: [{ role: 'user', content: 'Hello there, how are you today?' }], max_tokens: t, stream: true });
const scripts = { one: postScript(body(1)), many: postScript(body(tokens)) };
console.log(`A = ${dirA} ${process.env.BENCH_ARGS_A ?? ''}\nB = ${dirB} ${process.env.BENCH_ARGS_B ?? ''}\n${rounds} rounds, wrk -t1 -c${connections} -d${seconds}s after a 2 s warm-up, streamed chat of 1 and ${tokens} tokens; load: ${uptime()}`);
console.log(`| round | build | req/s (1 / ${tokens} tokens) | CPU / req (1 token) | CPU / req (${tokens} tokens) | CPU / token (slope) |\n|---|---|---:|---:|---:|---:|`);
const perToken: Record<string, number[]> = { A: [], B: [] };
const cpuPerReq = (s: (typeof servers)[number], script: string) => {
  const url = `http://127.0.0.1:${s.port}/v1/chat/completions`;
  wrk(url, { connections, seconds: 2, script });
  const c0 = cpuMsOf(s.child.pid!);
  const w = wrk(url, { connections, seconds, script });
  return { us: ((cpuMsOf(s.child.pid!) - c0) * 1000) / w.requests, rps: w.rps };
};

/** Sequential streamed requests on one keep-alive socket: ms from the write to the first content delta. */
async function ttft(port: number, count: number): Promise<number[]> {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((r) => sock.once('connect', () => r()));
  sock.setNoDelay(true);
  const payload = JSON.stringify(body(8));
  const req = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`;
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    await new Promise<void>((resolve) => {
      let t0 = 0;
      let seen = '';
      let first = false;
      const onData = (d: Buffer) => {
        seen += d.toString('latin1');
        if (!first && seen.includes('"delta":{"content":"')) {
          first = true;
          out.push(Number(process.hrtime.bigint() - BigInt(t0)) / 1e6);
        }
        if (seen.includes('data: [DONE]') && seen.endsWith('0\r\n\r\n')) {
          sock.off('data', onData);
          resolve();
        }
      };
      sock.on('data', onData);
      t0 = Number(process.hrtime.bigint());
      sock.write(req);
    });
  }
  sock.destroy();
  return out;
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
try {
  for (let r = 1; r <= rounds; r++) {
    for (const s of r % 2 ? servers : [...servers].reverse()) {
      const one = cpuPerReq(s, scripts.one);
      const many = cpuPerReq(s, scripts.many);
      const slope = (many.us - one.us) / (tokens - 1);
      perToken[s.name].push(slope);
      console.log(`| ${r} | ${s.name} | ${Math.round(one.rps)} / ${Math.round(many.rps)} | ${Math.round(one.us)} µs | ${Math.round(many.us)} µs | ${slope.toFixed(2)} µs |`);
    }
  }
  console.log(`median CPU/token: A ${med(perToken.A).toFixed(2)} µs, B ${med(perToken.B).toFixed(2)} µs, B/A ${(med(perToken.B) / med(perToken.A)).toFixed(3)}`);
  // TTFT, interleaved in blocks so both builds see the same load.
  const tt: Record<string, number[]> = { A: [], B: [] };
  for (let r = 0; r < 4; r++) for (const s of r % 2 ? [...servers].reverse() : servers) tt[s.name].push(...(await ttft(s.port, 100)));
  for (const s of servers) console.log(`TTFT ${s.name} (unloaded, ${tt[s.name].length} sequential streams): p50 ${med(tt[s.name]).toFixed(3)} ms, p90 ${q(tt[s.name], 0.9).toFixed(3)} ms, p99 ${q(tt[s.name], 0.99).toFixed(3)} ms`);
  console.log(`load after: ${uptime()}`);
} finally {
  await stopInOrder([...servers.map((s) => s.child), engine.child]);
}
