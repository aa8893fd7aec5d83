// The floor of Portico's architecture: how many req/s a uWebSockets.js frontend
// that makes one gRPC call over Node's http2 per request can reach on this machine, and how
// far Portico's chat path is from it. One run, rounds alternating over the targets (the
// order rotates every round), each target a 2 s wrk warm-up then the measured run (and
// 4 s of each before the first round):
//
//   hello GET     uWS hello world, GET (bench/http.bench.ts's ceiling)
//   hello POST    the same app, POST of the chat body (copied out, not parsed)
//   floor         uWS + one Generate call over a kept-alive node:http2 session to the
//                 minimal engine (bench/floor-servers.ts), then a small JSON answer
//   Portico/mock  `portico serve` (one shard) against `portico mock-engine` (echo, zero delay)
//   Portico/min   `portico serve` (one shard) against the minimal engine of the floor row,
//                 so the engine side costs the same as there
//
// wrk -t1 -cN POSTs the same chat body to every target but hello GET. CPU per request is
// utime+stime from /proc of the frontend, of the engine, and of wrk (this process's waited-for
// children), over the requests wrk counted.
//
//   with --eol-bind, also the floor again with bench/eol-bind.ts loaded: Node's AsyncResource.bind
//                 without the deprecated accessors Node 20 makes per stream (Portico's serve
//                 installs that bind by itself, src/runtime/lean-async-bind.ts)
//
// Usage: npm run build:ts && node dist/bench/floor.bench.js [seconds=5] [rounds=3] [connections=64] [--eol-bind]
// BENCH_PIN=1: the frontend under test on CPU 0, engines and wrk on CPU 1 (wrk-harness.ts).
// Needs `wrk`. Every load targets 127.0.0.1.

import { cpus } from 'node:os';

import { childrenCpuMs, cpuMsOf, postScript, QWEN3, ROOT, startNode, startPortico, stopInOrder, uptime, wrk, ZERO_DELAY, type Started } from './wrk-harness.js';

const argv = process.argv.slice(2).filter((a) => a !== '--eol-bind');
const eolBind = argv.length < process.argv.length - 2;
const seconds = Number(argv[0] ?? 5);
const rounds = Number(argv[1] ?? 3);
const connections = Number(argv[2] ?? 64);

interface Target {
  name: string;
  url: string;
  script?: string;
  frontend?: Started;
  engine?: Started;
}

interface Sample { rps: number; p50: string; p99: string; frontendUs: number; engineUs: number; wrkUs: number }

const chat = postScript({ model: 'models', messages: [{ role: 'user', content: 'Hello there, how are you today?' }], max_tokens: 1 });
const procs: Started[] = [];
const started = async (p: Promise<Started>) => {
  const s = await p;
  procs.push(s);
  return s;
};
const serve = (worker: string) => startPortico(['serve', '--host', '127.0.0.1', '--http-port', '0', '--model-path', QWEN3, '--model-name', 'models', '--worker', worker, '--shards', '1']);
const EOL_BIND = ['--import', `${ROOT}dist/bench/eol-bind.js`];

try {
  const hello = await started(startNode(`${ROOT}dist/bench/hello-servers.js`, ['uws', '0']));
  const minEngine = await started(startNode(`${ROOT}dist/bench/floor-servers.js`, ['engine', '0']));
  const floor = await started(startNode(`${ROOT}dist/bench/floor-servers.js`, ['uws-h2', '0', String(minEngine.port)]));
  const mock = await started(startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', ...ZERO_DELAY]));
  const onMock = await started(serve(`grpc://127.0.0.1:${mock.port}`));
  const onMin = await started(serve(`grpc://127.0.0.1:${minEngine.port}`));
  const at = (s: Started, path = '/') => `http://127.0.0.1:${s.port}${path}`;
  const targets: Target[] = [
    { name: 'uWS hello, GET', url: at(hello), frontend: hello },
    { name: 'uWS hello, POST chat body', url: at(hello), script: chat, frontend: hello },
    { name: 'floor: uWS + one node:http2 gRPC call, minimal engine', url: at(floor), script: chat, frontend: floor, engine: minEngine },
    { name: 'Portico chat, `portico mock-engine` (echo, zero delay)', url: at(onMock, '/v1/chat/completions'), script: chat, frontend: onMock, engine: mock },
    { name: 'Portico chat, minimal engine', url: at(onMin, '/v1/chat/completions'), script: chat, frontend: onMin, engine: minEngine },
  ];
  if (eolBind) {
    // The floor app with Node's AsyncResource.bind as it is after DEP0172's End-of-Life.
    const floorEol = await started(startNode(`${ROOT}dist/bench/floor-servers.js`, ['uws-h2', '0', String(minEngine.port)], EOL_BIND));
    targets.push({ name: 'floor, End-of-Life `AsyncResource.bind`', url: at(floorEol), script: chat, frontend: floorEol, engine: minEngine });
  }
  const before = uptime();
  console.log(`${cpus().length} cores (${cpus()[0]!.model}), Node ${process.version}; wrk -t1 -c${connections} -d${seconds}s after 2 s of warm-up (4 s of each target before round 1), ${rounds} rounds\nload before: ${before}`);
  // JIT warm-up of every target before the first round (Portico's chat path needs seconds).
  for (const t of targets) wrk(t.url, { connections, seconds: 4, script: t.script });
  const samples = targets.map(() => [] as Sample[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < targets.length; k++) {
      const i = (k + r) % targets.length;
      const t = targets[i]!;
      const o = { connections, script: t.script };
      wrk(t.url, { ...o, seconds: 2 });
      const f0 = cpuMsOf(t.frontend!.child.pid!);
      const e0 = t.engine ? cpuMsOf(t.engine.child.pid!) : 0;
      const w0 = childrenCpuMs();
      const run = wrk(t.url, { ...o, seconds });
      const per = (ms: number) => (ms * 1000) / run.requests;
      const s: Sample = {
        rps: run.rps,
        p50: run.p50,
        p99: run.p99,
        frontendUs: per(cpuMsOf(t.frontend!.child.pid!) - f0),
        engineUs: t.engine ? per(cpuMsOf(t.engine.child.pid!) - e0) : NaN,
        wrkUs: per(childrenCpuMs() - w0),
      };
      samples[i]!.push(s);
      console.error(`round ${r + 1} ${t.name}: ${Math.round(s.rps)} req/s, p99 ${s.p99}, frontend ${s.frontendUs.toFixed(1)} µs/req, engine ${s.engineUs.toFixed(1)}, wrk ${s.wrkUs.toFixed(1)}`);
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const helloRps = med(samples[0]!.map((s) => s.rps));
  console.log(`load after: ${uptime()}\n`);
  console.log('| target | req/s (median; rounds) | vs hello GET | p50 | p99 (rounds) | frontend CPU / req | engine CPU / req | wrk CPU / req |');
  console.log('|---|---:|---:|---|---|---:|---:|---:|');
  const us = (x: number) => (Number.isNaN(x) ? '' : `${x.toFixed(0)} µs`);
  targets.forEach((t, i) => {
    const ss = samples[i]!;
    const rps = med(ss.map((s) => s.rps));
    console.log(`| ${t.name} | ${Math.round(rps)} (${ss.map((s) => Math.round(s.rps)).join(' / ')}) | ${(rps / helloRps).toFixed(3)} | ${ss.map((s) => s.p50).join(' / ')} | ${ss.map((s) => s.p99).join(' / ')} | ${us(med(ss.map((s) => s.frontendUs)))} | ${us(med(ss.map((s) => s.engineUs)))} | ${us(med(ss.map((s) => s.wrkUs)))} |`);
  });
} finally {
  // Frontends first (started last), then the engines.
  await stopInOrder(procs.reverse().map((p) => p.child));
}
process.exit(0);
