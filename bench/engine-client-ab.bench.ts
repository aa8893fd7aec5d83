// Engine-client CPU per request, A/B in one run: two builds of Portico (two
// directories holding a compiled dist/, e.g. a /tmp copy of main's and this
// tree's) each drive the same out-of-process echo mock engine with the unary
// benchmarks' request shape (11-token prompt, max_tokens 1, unary, 64 in flight). Each
// client runs in its own child process (process.cpuUsage, all threads), the two
// alternate for `rounds` rounds, and each measured run follows its own warm-up.
// Consumers stop reading at the completion, as src/pipeline does. No HTTP.
// BENCH_TOKENS=N (default 1): N-token streams from a zero-delay sim mock instead of the echo
// mock's one token, and the CPU per token as well: the engine side of a streamed token
// (socket read, HTTP/2, gRPC framing, decode) without the HTTP writes that dominate it.
//
// Usage: npm run build:ts && node dist/bench/engine-client-ab.bench.js <dirA> <dirB> [sglang|vllm] [requests=20000] [rounds=3]

import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { serveMockOverStdio, spawnMock } from './serve-procs.js';

const SELF = fileURLToPath(import.meta.url);
const CONCURRENCY = 64;
const TOKENS = Math.max(1, Number(process.env.BENCH_TOKENS ?? 1));

if (process.argv[2] === '--mock') {
  // Child: an echo mock from build A, reporting its CPU time to the parent.
  const { startMockEngine } = await import(pathToFileURL(`${process.argv[3]}/dist/src/mock/engine-server.js`).href);
  const sim = TOKENS > 1
    ? { mode: 'sim', stepMs: 0, prefillMsPerToken: 0, decodeMsPerSeq: 0, decodeMsPerKvToken: 0, eosProbability: 0, maxRunningRequests: 4096 }
    : { mode: 'echo' };
  serveMockOverStdio(await startMockEngine({ port: 0, ...sim, protocol: process.argv[4], eosTokenIds: [151645], vocabSize: 151669 }));
} else if (process.argv[2] === '--client') {
  const [, , , dir, url, requests] = process.argv;
  const { createEngineClient } = await import(pathToFileURL(`${dir}/dist/src/engine/factory.js`).href);
  const client = createEngineClient(url!);
  const inputIds = Uint32Array.from([151644, 872, 198, 45764, 23811, 13, 151645, 198, 151644, 77091, 198]);
  let seq = 0;
  const one = async () => {
    const ac = new AbortController();
    const p = { requestId: `chatcmpl-${process.pid}-${seq++}`, inputIds, stream: TOKENS > 1, maxNewTokens: TOKENS, temperature: 0.7, stopTokenIds: [151645] };
    for await (const ev of client.generate(p, ac.signal)) if (ev.kind === 'done') break;
  };
  const run = async (n: number) => {
    let left = n;
    const worker = async () => {
      while (left-- > 0) await one();
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };
  const n = Number(requests);
  await run(Math.max(2000, n / 4)); // warm-up: JIT and the connection
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await run(n);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const c = process.cpuUsage(c0);
  process.stdout.write(JSON.stringify({ cpuUs: c.user + c.system, ms, n }) + '\n');
  client.close();
  process.exit(0);
} else {
  await main();
}

function child(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [SELF, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`client exited ${code}`))));
  });
}

async function main(): Promise<void> {
  const [dirA, dirB, protocol = 'sglang', requests = '20000', roundsArg = '3'] = process.argv.slice(2);
  if (!dirA || !dirB) throw new Error('usage: engine-client-ab.bench.js <dirA> <dirB> [sglang|vllm] [requests] [rounds]');
  const mock = await spawnMock(SELF, ['--mock', dirA, protocol]);
  const mockCpu = () => mock.cpuUs();
  let url = mock.url;
  if (protocol === 'vllm') url = url.replace(/^grpc:/, 'vllm+grpc:');
  console.log(`engine client A/B, ${protocol}, ${requests} requests of ${TOKENS} token(s) × ${CONCURRENCY} in flight, mock ${url}`);
  console.log('| round | build | req/s | client CPU / req | client CPU / token | mock CPU / req | load |');
  console.log('|---|---|---:|---:|---:|---:|---:|');
  const per: Record<string, number[]> = { A: [], B: [] };
  for (let r = 1; r <= Number(roundsArg); r++) {
    for (const [name, dir] of [['A', dirA], ['B', dirB]] as const) {
      const m0 = await mockCpu();
      const res = JSON.parse(await child(['--client', dir, url, requests]));
      const m1 = await mockCpu();
      const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
      // The mock's figure includes its share of the client's warm-up.
      const perReq = res.cpuUs / res.n;
      per[name]!.push(perReq);
      console.log(`| ${r} | ${name} | ${Math.round((res.n * 1000) / res.ms)} | ${perReq.toFixed(1)} µs | ${(perReq / TOKENS).toFixed(2)} µs | ${((m1 - m0) / (res.n + Math.max(2000, res.n / 4))).toFixed(1)} µs | ${load} |`);
    }
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
  console.log(`median client CPU / req: A ${med(per.A!).toFixed(1)} µs, B ${med(per.B!).toFixed(1)} µs, B/A ${(med(per.B!) / med(per.A!)).toFixed(3)}`
    + (TOKENS > 1 ? `; per token A ${(med(per.A!) / TOKENS).toFixed(2)} µs, B ${(med(per.B!) / TOKENS).toFixed(2)} µs` : ''));
  await mock.exit();
}
