// Frontend CPU per request with a pass-through custom chat processor (spec 002; the example
// package in examples/passthrough-processor: template, router, detokenizer, chunks) against
// the native path, in the same run. One `portico mock-engine` (echo, zero delay)
// is shared by two one-shard `serve` processes, native and processor; wrk loads them in turn,
// round after round, so both see the same machine load. CPU per request is the serve
// process's utime+stime (/proc) over the requests wrk made.
//
// Usage: npm run build:ts && node dist/bench/processor-cpu.bench.js [rounds=3] [seconds=5] [connections=16]
// Needs `wrk`.

import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMsOf, postScript, QWEN3, ROOT, startPortico, stopInOrder, uptime, wrk, ZERO_DELAY } from './wrk-harness.js';

const rounds = Number(process.argv[2] ?? 3);
const seconds = Number(process.argv[3] ?? 5);
const connections = Number(process.argv[4] ?? 16);

// The example installed as npm lays it out, beside a link to this repository (its peer dependency).
const project = mkdtempSync(join(tmpdir(), 'portico-processor-bench-'));
process.on('exit', () => rmSync(project, { recursive: true, force: true }));
mkdirSync(join(project, 'node_modules'));
cpSync(join(ROOT, 'examples/passthrough-processor'), join(project, 'node_modules/portico-example-passthrough-processor'), { recursive: true });
symlinkSync(ROOT, join(project, 'node_modules/portico'), 'dir');
const processor = `${project}/node_modules/portico-example-passthrough-processor/processor.mjs:provider`;

const engine = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', ...ZERO_DELAY]);
const worker = `grpc://127.0.0.1:${engine.port}`;
const base = ['serve', '--host', '127.0.0.1', '--http-port', '0', '--model-path', QWEN3, '--model-name', 'm', '--worker', worker, '--shards', '1'];
const servers = [
  { name: 'native', ...(await startPortico(base)) },
  { name: 'processor', ...(await startPortico([...base, '--chat-processor', processor])) },
];
const messages = [{ role: 'user', content: 'Hello there, how are you today?' }];
const workloads = [
  { name: 'unary, 1 token', script: postScript({ model: 'm', messages, max_tokens: 1 }) },
  { name: 'stream, prompt echoed to EOS', script: postScript({ model: 'm', messages, max_tokens: 32, stream: true }) },
];
console.log(`${rounds} rounds, wrk -t1 -c${connections} -d${seconds}s after a 2 s warm-up; load: ${uptime()}`);
console.log('| workload | round | path | req/s | p50 | p99 | frontend CPU / req |\n|---|---|---|---:|---:|---:|---:|');
const perReq: Record<string, number[]> = {};
try {
  for (const wl of workloads) {
    for (let r = 1; r <= rounds; r++) {
      for (const s of r % 2 ? servers : [...servers].reverse()) {
        const url = `http://127.0.0.1:${s.port}/v1/chat/completions`;
        wrk(url, { connections, seconds: 2, script: wl.script });
        const c0 = cpuMsOf(s.child.pid!);
        const w = wrk(url, { connections, seconds, script: wl.script });
        const us = ((cpuMsOf(s.child.pid!) - c0) * 1000) / w.requests;
        (perReq[`${wl.name}|${s.name}`] ??= []).push(us);
        console.log(`| ${wl.name} | ${r} | ${s.name} | ${Math.round(w.rps)} | ${w.p50} | ${w.p99} | ${Math.round(us)} µs |`);
      }
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const wl of workloads) {
    const n = med(perReq[`${wl.name}|native`]);
    const p = med(perReq[`${wl.name}|processor`]);
    console.log(`${wl.name}: median CPU/req native ${Math.round(n)} µs, processor ${Math.round(p)} µs, processor/native ${(p / n).toFixed(2)}`);
  }
  console.log(`load after: ${uptime()}`);
} finally {
  await stopInOrder([...servers.map((s) => s.child), engine.child]);
}
