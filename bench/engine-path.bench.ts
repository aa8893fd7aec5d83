// Engine path latency: Portico's engine client against the echo mock engine,
// no HTTP. An 8-token streamed request (30-token prompt), sequential and with
// 64 in flight, on both protocols, through the direct HTTP/2 Generate path
// (default) and through Connect's client (generateTransport: 'connect').
//
// The mock runs in a child process so each side's CPU per request is measured
// on its own (process.cpuUsage, all threads). Consumers stop reading at the
// last completion, as src/pipeline does. Every cell runs `reps` times; the
// table shows the median and the range, since other work shares the machine.
//
// Usage: npm run build:ts && node dist/bench/engine-path.bench.js [seconds-per-cell=1.5] [reps=3]

import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

import { createEngineClient } from '../src/engine/factory.js';
import { startMockEngine } from '../src/mock/engine-server.js';
import { serveMockOverStdio, spawnMock } from './serve-procs.js';

const SELF = fileURLToPath(import.meta.url);

if (process.argv[2] === '--mock') {
  // Child: an echo mock, reporting its CPU time to the parent.
  serveMockOverStdio(await startMockEngine({ port: 0, mode: 'echo', protocol: process.argv[3] as 'sglang' | 'vllm', eosTokenIds: [151645], vocabSize: 151669 }));
} else {
  await main();
}

interface Sample { rps: number; p50: number; p99: number; clientUs: number; mockUs: number }

async function main() {
  const seconds = Number(process.argv[2] ?? 1.5);
  const reps = Number(process.argv[3] ?? 3);
  const ids = Uint32Array.from({ length: 30 }, (_, i) => 100 + i);
  const rows: string[] = [];
  let k = 0;
  for (const protocol of ['sglang', 'vllm'] as const) {
    const mock = await spawnMock(SELF, ['--mock', protocol]);
    const url = mock.url;
    const mockCpu = () => mock.cpuUs();
    for (const transport of ['h2', 'connect'] as const) {
      const client = createEngineClient(url, { generateTransport: transport });
      const signal = new AbortController().signal;
      const one = async (lat: number[]) => {
        const t = performance.now();
        for await (const ev of client.generate({ requestId: `b${k++}`, inputIds: ids, maxNewTokens: 8, stream: true }, signal)) {
          if (ev.kind === 'done') break;
        }
        lat.push(performance.now() - t);
      };
      // Warm up the connection and the JIT.
      for (let i = 0; i < 300; i++) await one([]);
      for (const conc of [1, 64]) {
        const samples: Sample[] = [];
        for (let r = 0; r < reps; r++) {
          const lat: number[] = [];
          const m0 = await mockCpu();
          const c0 = process.cpuUsage();
          const t0 = performance.now();
          const end = t0 + seconds * 1000;
          await Promise.all(Array.from({ length: conc }, async () => {
            while (performance.now() < end) await one(lat);
          }));
          const dt = performance.now() - t0;
          const c = process.cpuUsage(c0);
          const m1 = await mockCpu();
          lat.sort((a, b) => a - b);
          samples.push({
            rps: (lat.length / dt) * 1000,
            p50: lat[lat.length >> 1]!,
            p99: lat[Math.floor(lat.length * 0.99)]!,
            clientUs: (c.user + c.system) / lat.length,
            mockUs: (m1 - m0) / lat.length,
          });
        }
        rows.push(`| ${protocol} | ${transport === 'h2' ? 'direct HTTP/2' : 'Connect'} | ${conc} | ${fmt(samples, 'rps', 0)} | ${fmt(samples, 'p50', 2)} | ${fmt(samples, 'p99', 2)} | ${fmt(samples, 'clientUs', 0)} | ${fmt(samples, 'mockUs', 0)} |`);
        console.error(rows.at(-1));
      }
      client.close();
    }
    await mock.exit();
  }
  console.log(`\n${cpus().length} cores (${cpus()[0]!.model}), Node ${process.version}; echo mock in a child process; 8 tokens per request, 30-token prompt; ${reps} runs of ${seconds} s per row: median [min–max]\n`);
  console.log('| protocol | Generate path | in flight | req/s | p50 ms | p99 ms | client CPU µs/req | mock CPU µs/req |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
  process.exit(0);
}

function fmt(s: Sample[], key: keyof Sample, digits: number): string {
  const v = s.map((x) => x[key]).sort((a, b) => a - b);
  const f = (x: number) => x.toFixed(digits);
  return `${f(v[v.length >> 1]!)} [${f(v[0]!)}–${f(v.at(-1)!)}]`;
}
