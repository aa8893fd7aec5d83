// Frontend CPU per request of a unary 1-token chat with tracing off and on, in one run:
// the same wrk load, round after round, against one-shard `serve`s that share one zero-delay
// `portico mock-engine`:
//   main  a build of the code before tracing (optional: its directory as the first argument)
//   off   this build, no tracing flag (what every deployment without a collector runs)
//   on    this build exporting every request's spans (ratio 1) over OTLP/gRPC to a receiver
//         process (test/helpers/otlp-receiver-child.js, counting only)
//   on0   this build with --trace-sample-ratio 0 (the context made and sent to the engine, no spans)
// CPU per request is the serve process's utime+stime over the requests wrk made.
//
// Usage: npm run build:ts && node dist/bench/tracing-cpu.bench.js [mainDir] [rounds=3] [seconds=5] [connections=64]
// (BENCH_CONFIGS=on0 or =main,on0...: only those configurations beside off.)
// BENCH_PIN=1: the frontends on CPU 0, engine and wrk on CPU 1 (wrk-harness.ts). Needs `wrk`.

import { spawn } from 'node:child_process';
import { resolve as resolvePath } from 'node:path';
import { medianOf, postScript, QWEN3, ROOT, startPortico, stopInOrder, uptime, wrkRounds, ZERO_DELAY } from './wrk-harness.js';

const args = process.argv.slice(2);
const mainDir = args[0] !== undefined && !/^\d+$/.test(args[0]) ? resolvePath(args.shift()!) : null;
const rounds = Number(args[0] ?? 3);
const seconds = Number(args[1] ?? 5);
const connections = Number(args[2] ?? 64);

const receiver = spawn(process.execPath, [`${ROOT}dist/test/helpers/otlp-receiver-child.js`, 'serve', 'count'], { stdio: ['ignore', 'pipe', 'inherit'] });
const ports = await new Promise<{ grpc: number; http: number }>((resolve) => {
  let line = '';
  receiver.stdout!.on('data', (d: Buffer) => {
    line += d.toString();
    if (line.includes('\n')) resolve(JSON.parse(line) as { grpc: number; http: number });
  });
});
const engine = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', ...ZERO_DELAY]);
const serveArgs = ['serve', '--host', '127.0.0.1', '--http-port', '0', '--model-path', QWEN3, '--model-name', 'models', '--worker', `grpc://127.0.0.1:${engine.port}`, '--shards', '1'];
const otlp = ['--otlp-traces-endpoint', `http://127.0.0.1:${ports.grpc}`];
// BENCH_CONFIGS=off,on0 runs only those (off is always kept: the ratios are against it).
const only = (process.env.BENCH_CONFIGS ?? '').split(',').filter(Boolean);
const configs: { name: string; dir: string; extra: string[] }[] = [
  ...(mainDir ? [{ name: 'main', dir: mainDir, extra: [] }] : []),
  { name: 'off', dir: ROOT, extra: [] },
  { name: 'on', dir: ROOT, extra: otlp },
  { name: 'on0', dir: ROOT, extra: [...otlp, '--trace-sample-ratio', '0'] },
].filter((c) => only.length === 0 || c.name === 'off' || only.includes(c.name));
const servers = [];
for (const c of configs) servers.push({ ...c, ...(await startPortico([...serveArgs, ...c.extra], c.dir)) });
const script = postScript({ model: 'models', messages: [{ role: 'user', content: 'Hello there, how are you today?' }], max_tokens: 1 });
console.log(`${configs.map((c) => `${c.name} = ${c.dir} ${c.extra.join(' ')}`).join('\n')}\n${rounds} rounds, wrk -t1 -c${connections} -d${seconds}s after a 2 s warm-up; load: ${uptime()}`);
console.log('| round | config | req/s | p50 | p99 | frontend CPU / req |\n|---|---|---:|---:|---:|---:|');
try {
  const perReq = wrkRounds(servers, rounds, { connections, seconds, script });
  const med = medianOf;
  const m = (n: string) => med(perReq[n]);
  const ratios = configs.filter((c) => c.name !== 'off').map((c) => (c.name === 'main' ? `off/main ${(m('off') / m('main')).toFixed(3)}` : `${c.name}/off ${(m(c.name) / m('off')).toFixed(3)}`));
  console.log(`median CPU/req: ${configs.map((c) => `${c.name} ${Math.round(m(c.name))} µs`).join(', ')}; ${ratios.join(', ')}`);
  const got = (await (await fetch(`http://127.0.0.1:${ports.http}/spans`)).json()) as { counted: number };
  console.log(`spans the receiver took: ${got.counted}; load after: ${uptime()}`);
} finally {
  await stopInOrder([...servers.map((s) => s.child), engine.child]);
  receiver.kill();
}
