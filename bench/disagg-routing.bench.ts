// A routing decision with both pools: an aggregated model of 64 workers against a
// disaggregated one of 32 prefill and 32 decode workers, same index size per pool.
//
//   npm run build:ts && node dist/bench/disagg-routing.bench.js [--quick]
//
// Each pool's index holds 4096 distinct 128-block prefixes of 16-token blocks, each on 1-3
// of its workers, with random load. A request is a 4096-token prompt whose first 128 blocks
// are one indexed prefix. Timed: route() end to end (hashing, matching, cost, pick, load
// accounting; done() right after, untimed). Disaggregated, route() picks the decode worker
// (kv cost over the decode pool) and then the prefill worker (kv cost over the prefill pool):
// the prompt's keys are computed per router, so the figure is about two aggregated decisions.

import { ModelRouter } from '../src/router/router.js';
import { DisaggregatedRouter } from '../src/router/disaggregated-router.js';
import { blockKeys, rootLanes } from '../src/router/hash.js';
import { LoadField } from '../src/router/load-table.js';
import { holderOf } from '../src/router/holders.js';
import { WorkerPool, type WorkerRole } from '../src/router/worker-pool.js';
import type { EngineClient } from '../src/engine/types.js';
import type { Dispatch, Router } from '../src/router/types.js';
import { seededRandom } from './seeded-random.js';

const quick = process.argv.includes('--quick');
const BS = 16;
const PREFIXES = quick ? 512 : 4096;
const DEPTH = 128;
const PROMPT = 4096;
const ITER = quick ? 2000 : 20000;

const rand = seededRandom(12345);
const OPTS = { mode: 'kv' as const, blockSize: BS, kvEvents: false, predictedTtlSecs: 1e9, inflightTtlSecs: 0 };

function poolOf(roles: WorkerRole[]): WorkerPool {
  const clients = roles.map((role, i) => ({ client: { url: `grpc://w${i}:1`, health: async () => true, serverInfo: async () => ({ maxTotalNumTokens: 0, disaggregation: { role: null } }), close() {} } as unknown as EngineClient, role }));
  const pool = new WorkerPool(clients, { model: 'bench' });
  for (const w of pool.workers) w.healthy = true;
  return pool;
}

const root = rootLanes();
const prompts: Uint32Array[] = [];
for (let p = 0; p < 256; p++) prompts.push(Uint32Array.from({ length: PROMPT }, () => Math.floor(rand() * 150_000)));

/** Fill a router's index with PREFIXES prefixes (the first 256 are the bench prompts') and random load. */
function fill(r: ModelRouter): void {
  for (const t of r.slots.list) t.eventsSeen = true;
  const n = r.slots.list.length;
  for (let p = 0; p < PREFIXES; p++) {
    const toks = p < prompts.length ? prompts[p]! : Uint32Array.from({ length: DEPTH * BS }, () => Math.floor(rand() * 150_000));
    const keys = blockKeys(toks.subarray(0, DEPTH * BS), BS, root);
    const holders = 1 + Math.floor(rand() * 3);
    for (let h = 0; h < holders; h++) {
      const slot = Math.floor(rand() * n);
      for (const k of keys) r.index.add(k, holderOf(slot, 0));
    }
  }
  for (let s = 0; s < n; s++) {
    r.load.set(s, LoadField.DecodeBlocks, Math.floor(rand() * 4000));
    r.load.set(s, LoadField.PrefillTokens, Math.floor(rand() * 8000));
  }
}

function time(label: string, router: Router): { label: string; mean: number; p50: number; p99: number } {
  const one = (i: number) => {
    const d = router.route({ tokens: prompts[i % prompts.length]!, hints: {} }) as Dispatch;
    return d;
  };
  const finish = (d: Dispatch) => {
    d.prefill?.done();
    d.done();
  };
  for (let i = 0; i < ITER / 10; i++) finish(one(i));
  const samples = new Float64Array(ITER);
  for (let i = 0; i < ITER; i++) {
    const a = performance.now();
    const d = one(i);
    samples[i] = (performance.now() - a) * 1000;
    finish(d);
  }
  const sorted = Float64Array.from(samples).sort();
  return { label, mean: samples.reduce((s, x) => s + x, 0) / ITER, p50: sorted[Math.floor(ITER * 0.5)]!, p99: sorted[Math.floor(ITER * 0.99)]! };
}

const aggPool = poolOf(Array.from({ length: 64 }, () => 'aggregated'));
const agg = new ModelRouter(aggPool.view(['aggregated', 'decode']), OPTS, { rand });
const pdPool = poolOf(Array.from({ length: 64 }, (_, i) => (i < 32 ? 'prefill' : 'decode')));
const pd = new DisaggregatedRouter(pdPool, new ModelRouter(pdPool.view(['aggregated', 'decode']), OPTS, { rand }), new ModelRouter(pdPool.view(['prefill']), OPTS, { rand }), { enforce: true });
await new Promise((r) => setImmediate(r));
fill(agg);
fill(pd.main);
fill(pd.prefill);

const rows: ReturnType<typeof time>[] = [];
// Interleaved: aggregated, disaggregated, aggregated, disaggregated.
for (let round = 0; round < 2; round++) {
  rows.push(time(`aggregated, 64 workers (round ${round + 1})`, agg));
  rows.push(time(`disaggregated, 32 prefill + 32 decode (round ${round + 1})`, pd));
}
console.log(`| routing decision | mean µs | p50 µs | p99 µs |\n|---|---:|---:|---:|`);
for (const r of rows) console.log(`| ${r.label} | ${r.mean.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} |`);
const p50 = (re: RegExp) => rows.filter((r) => re.test(r.label)).map((r) => r.p50);
const a = p50(/^aggregated/);
const b = p50(/^disaggregated/);
console.log(`\np50 ratio disaggregated / aggregated: ${(b.reduce((s, x) => s + x, 0) / a.reduce((s, x) => s + x, 0)).toFixed(2)}`);
agg.close();
pd.close();
