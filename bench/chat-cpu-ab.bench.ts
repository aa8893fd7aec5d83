// Frontend CPU per request of a unary 1-token chat, A/B between builds in one run (issue 8).
// One `portico mock-engine` (echo, zero delay) is shared; each build directory (a copy of the
// repo's bin/ and dist/ with build/, native/, node_modules/ linked) runs its own one-shard
// `serve` pointing at it, and wrk loads them in turn, round after round, so both see the same
// machine load. CPU per request is the serve process's utime+stime over the requests wrk made.
//
// Usage: npm run build:ts && node dist/bench/chat-cpu-ab.bench.js <dirA> <dirB> [rounds=3] [seconds=5] [connections=64]
// (a directory of '.' means this repo). Needs `wrk`.

import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { resolve as resolvePath } from 'node:path';
import { cpuMsOf, postScript, QWEN3, ROOT } from './wrk-harness.js';

const [dirA, dirB] = [process.argv[2], process.argv[3]].map((d) => resolvePath(d === '.' || !d ? ROOT : d));
const rounds = Number(process.argv[4] ?? 3);
const seconds = Number(process.argv[5] ?? 5);
const connections = Number(process.argv[6] ?? 64);

function start(dir: string, args: string[]): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`${dir}/bin/portico.js`, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PORTICO_SHARDS: '1' } });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (?:[a-z+]+:\/\/)?[^:\s]+:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

function wrk(url: string, script: string, secs: number): { rps: number; requests: number; p50: string; p99: string } {
  const out = execFileSync('wrk', ['-t1', `-c${connections}`, `-d${secs}s`, '--latency', '-s', script, url], { encoding: 'utf8' });
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (errors) throw new Error(`wrk saw ${errors[1]} non-2xx responses on ${url}`);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN),
    p50: /^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '?',
    p99: /^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '?',
  };
}

const zero = ['--step-ms', '0', '--prefill-ms-per-token', '0', '--decode-ms-per-seq', '0', '--decode-ms-per-kv-token', '0'];
const engine = await start(ROOT, ['mock-engine', '--model-path', QWEN3, '--port', '0', ...zero]);
const worker = `grpc://127.0.0.1:${engine.port}`;
const servers = [];
for (const [name, dir] of [['A', dirA], ['B', dirB]] as const) {
  const s = await start(dir, ['serve', '--host', '127.0.0.1', '--http-port', '0', '--model-path', QWEN3, '--model-name', 'models', '--worker', worker, '--shards', '1']);
  servers.push({ name, dir, ...s });
}
const script = postScript({ model: 'models', messages: [{ role: 'user', content: 'Hello there, how are you today?' }], max_tokens: 1 });
console.log(`A = ${dirA}\nB = ${dirB}\n${rounds} rounds, wrk -t1 -c${connections} -d${seconds}s after a 2 s warm-up; load: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
console.log('| round | build | req/s | p50 | p99 | frontend CPU / req |\n|---|---|---:|---:|---:|---:|');
const perReq: Record<string, number[]> = { A: [], B: [] };
try {
  for (let r = 1; r <= rounds; r++) {
    for (const s of r % 2 ? servers : [...servers].reverse()) {
      const url = `http://127.0.0.1:${s.port}/v1/chat/completions`;
      wrk(url, script, 2);
      const c0 = cpuMsOf(s.child.pid!);
      const w = wrk(url, script, seconds);
      const us = ((cpuMsOf(s.child.pid!) - c0) * 1000) / w.requests;
      perReq[s.name].push(us);
      console.log(`| ${r} | ${s.name} | ${Math.round(w.rps)} | ${w.p50} | ${w.p99} | ${Math.round(us)} µs |`);
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`median CPU/req: A ${Math.round(med(perReq.A))} µs, B ${Math.round(med(perReq.B))} µs, B/A ${(med(perReq.B) / med(perReq.A)).toFixed(3)}`);
  console.log(`load after: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
} finally {
  for (const s of servers) s.child.kill('SIGTERM');
  engine.child.kill('SIGTERM');
}
