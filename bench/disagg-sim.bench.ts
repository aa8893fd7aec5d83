// Aggregated against disaggregated serving on the same number of simulated workers, under a
// prefill-heavy mixed workload: TTFT and inter-token latency percentiles from the client.
//
//   npm run build:ts && node dist/bench/disagg-sim.bench.js [rate=3] [requests=120] [rounds=1]
//
// Four `portico mock-engine --mode sim` processes with the simulator's default timing (decode
// step 20 ms, prefill 0.05 ms per new token plus attention, KV transfer 0.02 ms per token),
// prefix caching off so every prompt is computed: either four aggregated workers, or two
// prefill and two decode workers. One `portico serve --router-mode kv` in front, and
// `portico bench` driving it open-loop (Poisson arrivals at `rate` per second), streamed, from
// a dataset of prompts of 1,000 to 6,000 tokens with 64 to 256 output tokens each (seeded).
// Aggregated, a long prompt's prefill shares each step with the decodes in flight (chunked
// prefill), so their inter-token gaps stretch; disaggregated, decode steps carry no prefill,
// and the first token pays the KV transfer.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { QWEN3, ROOT, startPortico, stopInOrder, uptime } from './wrk-harness.js';
import { seededRandom } from './seeded-random.js';

/** `portico ARGS` to its end: exit code and stderr. */
function runPortico(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [`${ROOT}/bin/portico.js`, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    c.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('exit', (code) => resolve({ code: code ?? 1, stderr }));
  });
}

const rate = Number(process.argv[2] ?? 3);
const requests = Number(process.argv[3] ?? 120);
const rounds = Number(process.argv[4] ?? 1);

const rand = seededRandom(7);
const dir = mkdtempSync(join(tmpdir(), 'portico-disagg-sim-'));
const dataset = join(dir, 'mixed.jsonl');
const words = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'sigma', 'kappa', 'theta'];
const rows: string[] = [];
for (let i = 0; i < requests + 10; i++) {
  const n = 1000 + Math.floor(rand() * 5000);
  const prompt = Array.from({ length: n }, (_, k) => `${words[(k * 7 + i) % words.length]}${k % 97}`).join(' ');
  rows.push(JSON.stringify({ messages: [{ role: 'user', content: prompt }], max_tokens: 64 + Math.floor(rand() * 192) }));
}
writeFileSync(dataset, rows.join('\n') + '\n');

interface Stats {
  p50: number;
  p90: number;
  p99: number;
}
interface Summary {
  ttftMs?: Stats;
  itlPerGapMs?: Stats;
  errors?: unknown;
  [k: string]: unknown;
}

async function run(shape: 'aggregated' | 'disaggregated'): Promise<Summary> {
  const roles = shape === 'aggregated' ? ['aggregated', 'aggregated', 'aggregated', 'aggregated'] : ['prefill', 'prefill', 'decode', 'decode'];
  const engines: Awaited<ReturnType<typeof startPortico>>[] = [];
  for (const role of roles) engines.push(await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--mode', 'sim', '--eos-probability', '0', '--no-prefix-caching', '--role', role]));
  const flag = (role: string) => (role === 'aggregated' ? '--worker' : `--${role}-worker`);
  const fe = await startPortico(['serve', '--host', '127.0.0.1', '--http-port', '0', '--model-path', QWEN3, '--model-name', 'm', '--router-mode', 'kv', '--shards', '1', '--responses-store', 'off', ...roles.flatMap((r, k) => [flag(r), `grpc://127.0.0.1:${engines[k]!.port}`])]);
  try {
    const out = join(dir, `${shape}-${Date.now()}`);
    const r = await runPortico(['bench', '--url', `http://127.0.0.1:${fe.port}`, '--tokenizer', QWEN3, '--dataset', dataset, '--rate', String(rate), '--requests', String(requests), '--warmup', '5', '--stream', '--output', out, '--seed', '3']);
    if (r.code !== 0) throw new Error(`portico bench failed: ${r.stderr.slice(-2000)}`);
    return JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
  } finally {
    await stopInOrder([fe.child, ...engines.map((e) => e.child)]);
  }
}

console.log(`rate ${rate}/s, ${requests} requests, prompts 1000-6000 tokens, outputs 64-256 tokens; load: ${uptime()}`);
const results: Array<[string, Summary]> = [];
for (let r = 0; r < rounds; r++) {
  for (const shape of ['aggregated', 'disaggregated'] as const) results.push([`${shape} (round ${r + 1})`, await run(shape)]);
}
console.log('| shape | TTFT p50 ms | TTFT p90 | TTFT p99 | ITL p50 ms | ITL p90 | ITL p99 | errors |\n|---|---:|---:|---:|---:|---:|---:|---:|');
for (const [name, s] of results) {
  const t = s.ttftMs;
  const i = s.itlPerGapMs;
  console.log(`| ${name} | ${f(t?.p50)} | ${f(t?.p90)} | ${f(t?.p99)} | ${f(i?.p50)} | ${f(i?.p90)} | ${f(i?.p99)} | ${JSON.stringify(s.errors ?? {})} |`);
}
function f(x: number | undefined): string {
  return x === undefined ? '-' : x.toFixed(1);
}
process.exit(0);
