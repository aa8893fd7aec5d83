// One KV routing decision at scale: 64 workers, ~1M indexed blocks.
//
//   npm run build:ts && node dist/bench/router-decision.bench.js [--quick]
//
// The index holds 8192 distinct 128-block prefixes (1,048,576 blocks), each on
// 1–3 of 64 workers, with random load on every worker. A request is a 4096-token
// prompt (256 blocks of 16) whose first 128 blocks are one indexed prefix, so the
// match walks 128 blocks deep. Timed: ModelRouter.route() end to end — hashing the
// 4096 tokens, matching, the cost over 64 workers, the pick and the load
// accounting (done() right after, untimed) — and its parts separately.

import { ModelRouter } from '../src/router/router.js';
import { blockKeys, rootLanes } from '../src/router/hash.js';
import { LoadField } from '../src/router/load-table.js';
import { holderOf, MAX_DP_RANKS } from '../src/router/holders.js';
import { WorkerPool } from '../src/router/worker-pool.js';
import type { EngineClient } from '../src/engine/types.js';
import type { Dispatch } from '../src/router/types.js';
import { seededRandom } from './seeded-random.js';

const quick = process.argv.includes('--quick');
const WORKERS = 64;
const BS = 16;
const PREFIXES = quick ? 1024 : 8192;
const DEPTH = 128;
const PROMPT = 4096;
const ITER = quick ? 2000 : 20000;

const rand = seededRandom(12345);

const clients = Array.from({ length: WORKERS }, (_, i) => ({ url: `grpc://w${i}:1`, health: async () => true, serverInfo: async () => ({ maxTotalNumTokens: 0 }), close() {} }) as unknown as EngineClient);
const pool = new WorkerPool(clients, { model: 'bench' });
for (const w of pool.workers) w.healthy = true;
// In-flight prediction off for the main figure (it would index each prompt's new
// suffix and make the next match of the same prompt deeper); measured apart below.
const router = new ModelRouter(pool, { mode: 'kv', blockSize: BS, kvEvents: false, predictedTtlSecs: 1e9, inflightTtlSecs: 0 }, { rand });

// Workers whose blocks come from KV events: no predicted inserts at dispatch.
for (const t of router.slots.list) t.eventsSeen = true;
// Let the workers' server info answers settle (until then a kv decision waits for them).
await new Promise((r) => setImmediate(r));
const root = rootLanes();
const prompts: Uint32Array[] = [];
const t0 = performance.now();
for (let p = 0; p < PREFIXES; p++) {
  const toks = new Uint32Array(PROMPT);
  for (let i = 0; i < PROMPT; i++) toks[i] = Math.floor(rand() * 150_000);
  const keys = blockKeys(toks.subarray(0, DEPTH * BS), BS, root);
  const holders = 1 + Math.floor(rand() * 3);
  for (let h = 0; h < holders; h++) {
    const slot = Math.floor(rand() * WORKERS);
    for (const k of keys) router.index.add(k, holderOf(slot, 0));
  }
  if (p < 256) prompts.push(toks);
}
for (let s = 0; s < WORKERS; s++) {
  router.load.set(s, LoadField.DecodeBlocks, Math.floor(rand() * 4000));
  router.load.set(s, LoadField.PrefillTokens, Math.floor(rand() * 8000));
}
const built = performance.now() - t0;
const indexed = router.index.size;
const heap = process.memoryUsage().heapUsed / 2 ** 20;

function time(label: string, fn: (i: number) => void): { label: string; mean: number; p50: number; p99: number } {
  for (let i = 0; i < ITER / 10; i++) fn(i); // warm up
  const samples = new Float64Array(ITER);
  for (let i = 0; i < ITER; i++) {
    const a = performance.now();
    fn(i);
    samples[i] = (performance.now() - a) * 1000;
  }
  const sorted = Float64Array.from(samples).sort();
  const mean = samples.reduce((s, x) => s + x, 0) / ITER;
  return { label, mean, p50: sorted[Math.floor(ITER * 0.5)]!, p99: sorted[Math.floor(ITER * 0.99)]! };
}

const keysFor = prompts.map((p) => blockKeys(p, BS, root));
const overlap = new Uint32Array(WORKERS * MAX_DP_RANKS);
const rows = [
  time('route() end to end', (i) => {
    const d = router.route({ tokens: prompts[i % prompts.length]!, hints: {} }) as Dispatch;
    d.done();
  }),
  time('  hash 4096 tokens', (i) => void blockKeys(prompts[i % prompts.length]!, BS, root)),
  time('  match 256 keys (128 deep)', (i) => void router.index.match(keysFor[i % keysFor.length]!, overlap)),
];
// With in-flight prediction (the default): each decision also indexes the prompt's
// 128 uncached blocks for 2 s on the chosen worker. Fresh suffixes every time.
(router.opts as { inflightTtlSecs: number }).inflightTtlSecs = 2;
rows.push(
  time('route() + in-flight prediction of 128 new blocks', (i) => {
    const p = prompts[i % prompts.length]!;
    p[p.length - 1 - (i % 1024)] = (p[p.length - 1 - (i % 1024)]! + 1) % 150_000;
    const d = router.route({ tokens: p, hints: {} }) as Dispatch;
    d.done();
  }),
);

console.log(`index: ${indexed.toLocaleString('en-US')} blocks on ${WORKERS} workers, built in ${(built / 1000).toFixed(1)} s, heap ${heap.toFixed(0)} MiB`);
console.log(`${ITER} decisions, ${PROMPT}-token prompts, ${DEPTH}-block overlap`);
console.log('| step | mean µs | p50 µs | p99 µs |');
console.log('|---|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.label} | ${r.mean.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} |`);
