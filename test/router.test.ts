// Unit tests of the router: block hashing, the prefix index and its KV-event feed,
// predicted blocks, the cost function, queue order for every policy and tier,
// busy thresholds, and the router's decisions and load accounting.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockKeys, rootLanes } from '../src/router/hash.js';
import { KvIndex } from '../src/router/kv-index.js';
import { holderOf, MAX_DP_RANKS } from '../src/router/holders.js';
import { WorkerKvIngest } from '../src/router/kv-ingest.js';
import { PredictedBlocks } from '../src/router/predicted.js';
import { kvCost, lowest, softmaxPick } from '../src/router/cost.js';
import { PendingQueue, policyKey, type QueuePolicy, type Queued } from '../src/router/queue.js';
import { LoadField, LoadTable } from '../src/router/load-table.js';
import { isBusy } from '../src/router/thresholds.js';
import { ModelRouter } from '../src/router/router.js';
import { QueueRejectedError, DirectRouteError, DpRankError } from '../src/router/errors.js';
import { WorkerPool, UnknownWorkerError } from '../src/router/worker-pool.js';
import type { EngineClient } from '../src/engine/types.js';
import type { KvEvent } from '../src/engine/kv-events/index.js';
import type { Dispatch, RouteHints } from '../src/router/types.js';

const BS = 4;
const root = rootLanes();
const toks = (...xs: number[]) => Uint32Array.from(xs);
const seq = (n: number, from = 1) => Uint32Array.from({ length: n }, (_, i) => from + i);

test('hash: deterministic, chained on the prefix, namespaced by salt and adapter', () => {
  const a = blockKeys(seq(12), BS, root);
  assert.equal(a.length, 3);
  assert.deepEqual(blockKeys(seq(12), BS, root), a);
  assert.deepEqual(blockKeys(seq(9), BS, root), a.subarray(0, 2), 'a partial last block is not hashed');
  // The same tokens in block 2 under a different first block hash differently.
  const b = blockKeys(toks(9, 9, 9, 9, 5, 6, 7, 8), BS, root);
  assert.notEqual(b[1], a[1]);
  const salted = blockKeys(seq(12), BS, rootLanes(undefined, 'tenant-a'));
  const lora = blockKeys(seq(12), BS, rootLanes(undefined, undefined, 'tenant-a'));
  const other = blockKeys(seq(12), BS, rootLanes(undefined, 'tenant-b'));
  for (const k of [salted, lora, other]) for (let i = 0; i < 3; i++) assert.notEqual(k[i], a[i]);
  assert.notEqual(salted[0], lora[0]);
  assert.notEqual(salted[0], other[0]);
  assert.notDeepEqual(blockKeys(seq(12), BS, rootLanes(7)), a, 'the seed changes every key');
  for (const k of a) assert.ok(Number.isSafeInteger(k) && k >= 0);
});

test('index: insert, match per worker, remove', () => {
  const idx = new KvIndex();
  const k = blockKeys(seq(16), BS, root);
  for (const key of k) idx.add(key, 0); // worker 0: 4 blocks
  idx.add(k[0]!, 1); // worker 1: first block
  idx.add(k[1]!, 1);
  idx.add(k[3]!, 2); // worker 2: a hole at block 0 → no overlap
  const ov = new Uint32Array(4);
  assert.equal(idx.match(k, ov), 4);
  assert.deepEqual([...ov], [4, 2, 0, 0]);
  assert.ok(idx.remove(k[1]!, 0));
  assert.ok(!idx.remove(k[1]!, 0), 'a second remove finds nothing');
  idx.match(k, ov);
  assert.deepEqual([...ov], [1, 2, 0, 0]);
  assert.equal(idx.match(blockKeys(seq(16, 100), BS, root), ov), 0);
  assert.deepEqual([...ov], [0, 0, 0, 0]);
  // References: a block known twice for one worker survives one remove.
  idx.add(k[0]!, 3);
  idx.add(k[0]!, 3);
  idx.remove(k[0]!, 3);
  assert.ok(idx.holds(k[0]!, 3));
});

function stored(parent: bigint | undefined, blocks: [bigint, number[]][], dpRank = 0): KvEvent {
  return { kind: 'stored', worker: 'w', dpRank, parentHash: parent, blockSize: BS, blocks: blocks.map(([hash, tokenIds]) => ({ hash, tokenIds })) };
}

test('index from KV events: engine hashes map onto Portico chained hashes; removal, clear, reset, orphans', () => {
  const idx = new KvIndex();
  const ing = new WorkerKvIngest(idx, 0, BS);
  const prompt = seq(12);
  // The engine's hashes are arbitrary; its blocks arrive in two events chained by parent.
  ing.apply(stored(undefined, [[111n, [1, 2, 3, 4]]]));
  ing.apply(stored(111n, [[-222n, [5, 6, 7, 8]], [333n, [9, 10, 11, 12]]]));
  const ov = new Uint32Array(2);
  idx.match(blockKeys(prompt, BS, root), ov);
  assert.equal(ov[0], 3);
  // Salted requests never match unsalted blocks.
  idx.match(blockKeys(prompt, BS, rootLanes(undefined, 'tenant')), ov);
  assert.equal(ov[0], 0);
  ing.apply({ kind: 'removed', worker: 'w', dpRank: 0, hashes: [333n, 999n] });
  idx.match(blockKeys(prompt, BS, root), ov);
  assert.equal(ov[0], 2);
  // A block whose parent is unknown cannot be chained: dropped, counted.
  ing.apply(stored(777n, [[444n, [1, 1, 1, 1]]]));
  assert.equal(ing.stats.orphans, 1);
  // A block of the wrong size is skipped.
  ing.apply(stored(-222n, [[555n, [9, 10]]]));
  assert.equal(ing.stats.badSize, 1);
  ing.apply(stored(undefined, [[1n, [7, 7, 7, 7]]], 1));
  assert.equal(ing.blocks, 3);
  ing.apply({ kind: 'cleared', worker: 'w', dpRank: 0 });
  assert.equal(ing.blocks, 1);
  ing.apply({ kind: 'reset', worker: 'w', reason: 'reconnect' });
  assert.equal(ing.blocks, 0);
  assert.equal(idx.size, 0);
});

test('predicted blocks: inserted for a worker, expire after the TTL', () => {
  let now = 0;
  const idx = new KvIndex();
  const p = new PredictedBlocks(idx, 1000, () => now);
  const k = blockKeys(seq(8), BS, root);
  p.insert(2, k);
  const ov = new Uint32Array(3);
  idx.match(k, ov);
  assert.equal(ov[2], 2);
  now = 500;
  p.insert(2, k.subarray(0, 1)); // refresh block 0
  now = 1200;
  p.sweep(now, true);
  idx.match(k, ov);
  assert.equal(ov[2], 1, 'the refreshed block lives on');
  now = 1600;
  p.sweep(now, true);
  assert.equal(idx.size, 0);
});

test('cost: prefill weight × blocks still to prefill + decode blocks', () => {
  // 64 tokens = 4 blocks of 16; 2 cached → 32 uncached tokens = 2 blocks.
  assert.equal(kvCost(64, 16, 1, { overlapBlocks: 2, activePrefillTokens: 0, activeDecodeBlocks: 0 }), 2 + 2, 'cached blocks are not charged again');
  assert.equal(kvCost(64, 16, 2, { overlapBlocks: 0, activePrefillTokens: 32, activeDecodeBlocks: 10 }), 2 * 6 + 14);
  assert.equal(kvCost(64, 16, 1, { overlapBlocks: 9, activePrefillTokens: 0, activeDecodeBlocks: 0 }), 0, 'overlap never makes a term negative');
  const c = Float64Array.from([5, 3, 7, 3]);
  const picks = new Set<number>();
  for (let i = 0; i < 200; i++) picks.add(lowest(c, 4));
  assert.deepEqual([...picks].sort(), [1, 3], 'ties are broken at random');
  let r = 0;
  const rng = () => ((r = (r * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const count = (t: number) => {
    const n = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i++) n[softmaxPick(Float64Array.from([0, 10, 10, 10]), 4, t, rng)]!++;
    return n;
  };
  assert.deepEqual(count(0), [4000, 0, 0, 0]);
  const cold = count(0.1);
  const hot = count(10);
  assert.ok(cold[0]! > 3900, `T=0.1 picks the cheapest almost always: ${cold}`);
  assert.ok(hot[0]! < 1400 && hot[1]! > 800, `T=10 spreads: ${hot}`);
});

interface Item extends Queued {
  name: string;
}

function order(policy: QueuePolicy, items: { name: string; arrival: number; priority?: number; strict?: number; work?: number }[]): string[] {
  const q = new PendingQueue<Item>();
  items.forEach((it, i) =>
    q.push({ name: it.name, strict: it.strict ?? 0, seq: i, pos: -1, key: policyKey(policy, { arrivalMs: it.arrival, priority: it.priority ?? 0, workTokens: it.work ?? 100 }, 1000) }),
  );
  const out: string[] = [];
  for (let e = q.pop(); e; e = q.pop()) out.push(e.name);
  return out;
}

test('queue order: fcfs, lcfs, wspt; strict tiers first; priority moves earlier', () => {
  const base = [
    { name: 'a', arrival: 0, work: 300 },
    { name: 'b', arrival: 10, work: 100 },
    { name: 'c', arrival: 20, work: 200 },
  ];
  assert.deepEqual(order('fcfs', base), ['a', 'b', 'c']);
  assert.deepEqual(order('lcfs', base), ['c', 'b', 'a']);
  assert.deepEqual(order('wspt', base), ['b', 'c', 'a']);
  for (const p of ['fcfs', 'lcfs', 'wspt'] as const) {
    // A higher strict tier precedes everything below it, whatever the policy key.
    const tiered = [...base, { name: 't1', arrival: 5, work: 10_000, strict: 1 }, { name: 't2', arrival: 30, work: 10_000, strict: 2 }];
    const o = order(p, tiered);
    assert.deepEqual(o.slice(0, 2), ['t2', 't1'], p);
    assert.deepEqual(o.slice(2), order(p, base), `${p}: policy order within tier 0`);
    // agent_hints.priority moves a request earlier within its tier.
    const prio = order(p, [...base, { name: 'p', arrival: 15, work: 250, priority: 20 }]);
    assert.equal(prio[0], 'p', `${p}: ${prio}`);
    const demoted = order(p, [...base, { name: 'd', arrival: 5, work: 150, priority: -20 }]);
    assert.equal(demoted.at(-1), 'd', `${p}: ${demoted}`);
  }
  // fcfs: a priority point is worth the shift (1000 ms here), not more.
  assert.deepEqual(order('fcfs', [{ name: 'old', arrival: 0 }, { name: 'new', arrival: 1500, priority: 1 }]), ['old', 'new']);
  assert.deepEqual(order('fcfs', [{ name: 'old', arrival: 0 }, { name: 'new', arrival: 500, priority: 1 }]), ['new', 'old']);
  // Equal keys: arrival order.
  assert.deepEqual(order('wspt', [{ name: 'x', arrival: 0 }, { name: 'y', arrival: 0 }, { name: 'z', arrival: 0 }]), ['x', 'y', 'z']);
});

test('queue: remove from the middle keeps heap order', () => {
  const q = new PendingQueue<Item>();
  const items = Array.from({ length: 50 }, (_, i): Item => ({ name: String(i), strict: i % 3, key: (i * 37) % 50, seq: i, pos: -1 }));
  for (const it of items) q.push(it);
  for (const it of items.filter((_, i) => i % 4 === 0)) assert.ok(q.remove(it));
  const out: Item[] = [];
  for (let e = q.pop(); e; e = q.pop()) out.push(e);
  assert.equal(out.length, 50 - 13);
  for (let i = 1; i < out.length; i++) {
    const a = out[i - 1]!;
    const b = out[i]!;
    assert.ok(a.strict > b.strict || (a.strict === b.strict && a.key <= b.key));
  }
});

test('busy thresholds: queue threshold, prefill tokens, decode blocks fraction', () => {
  const t = new LoadTable(2);
  t.set(0, LoadField.PrefillTokens, 500);
  t.set(0, LoadField.DecodeBlocks, 80);
  t.set(0, LoadField.CapacityBlocks, 100);
  assert.equal(isBusy(t, 0, { maxBatchedTokens: 1000 }), false, 'no threshold: never busy');
  assert.equal(isBusy(t, 0, { maxBatchedTokens: 1000, queueThreshold: 0.5 }), true);
  assert.equal(isBusy(t, 0, { maxBatchedTokens: 1000, queueThreshold: 0.6 }), false);
  assert.equal(isBusy(t, 0, { maxBatchedTokens: 1000, activePrefillTokens: 400 }), true);
  assert.equal(isBusy(t, 0, { maxBatchedTokens: 1000, activeDecodeBlocks: 0.8 }), true);
  assert.equal(isBusy(t, 0, { maxBatchedTokens: 1000, activeDecodeBlocks: 0.9 }), false);
  assert.equal(isBusy(t, 1, { maxBatchedTokens: 1000, activeDecodeBlocks: 0.1 }), false, 'unknown capacity: not busy by blocks');
  // The table lives in a SharedArrayBuffer another shard can map.
  const twin = new LoadTable(2, t.buffer);
  twin.add(0, LoadField.PrefillTokens, -500);
  assert.equal(t.get(0, LoadField.PrefillTokens), 0);
});

function fakeClient(i: number): EngineClient {
  return {
    url: `grpc://fake-${i}:1`,
    health: async () => true,
    serverInfo: async () => ({ maxTotalNumTokens: 1600 }),
    close() {},
  } as unknown as EngineClient;
}

function pool(n: number): WorkerPool {
  const p = new WorkerPool(Array.from({ length: n }, (_, i) => fakeClient(i)), { model: 'm' });
  for (const w of p.workers) w.healthy = true;
  return p;
}

async function routeNow(r: ModelRouter, tokens: Uint32Array, hints: RouteHints = {}): Promise<Dispatch> {
  return r.route({ tokens, hints });
}

test('kv mode: the worker holding the prefix wins; load moves the choice; salted requests do not match', async () => {
  const p = pool(3);
  const sinks: ((e: KvEvent[]) => void)[] = [];
  const r = new ModelRouter(p, { mode: 'kv', blockSize: BS }, { kvSource: (o) => (sinks.push(o.sink), { worker: o.url, stats: {} as never, start() {}, close() {} }) });
  assert.equal(sinks.length, 3);
  const prompt = seq(32);
  // Worker 2 holds the first 6 of 8 blocks (engine hashes are its own).
  const blocks: [bigint, number[]][] = [];
  for (let i = 0; i < 6; i++) blocks.push([BigInt(1000 + i), [...prompt.subarray(i * BS, (i + 1) * BS)]]);
  sinks[2]!([stored(undefined, blocks)]);
  const d = await routeNow(r, prompt);
  assert.equal(d.worker.id, 2);
  assert.equal(d.overlapBlocks, 6);
  assert.equal(r.load.get(r.slots.get(2)!.slot, LoadField.PrefillTokens), 8);
  assert.equal(r.load.get(r.slots.get(2)!.slot, LoadField.DecodeBlocks), 2, 'only the 2 new blocks add KV');
  d.firstToken();
  assert.equal(r.load.get(r.slots.get(2)!.slot, LoadField.PrefillTokens), 0);
  d.done();
  d.done();
  assert.equal(r.load.get(r.slots.get(2)!.slot, LoadField.DecodeBlocks), 0, 'done is idempotent');
  // Salted: no overlap with the unsalted blocks, so the least-loaded choice.
  const s = await routeNow(r, prompt, { cacheSalt: 'tenant' });
  assert.equal(s.overlapBlocks, 0);
  s.firstToken();
  s.done();
  // ...and its blocks are predicted on the worker it went to: the next salted one follows.
  const s2 = await routeNow(r, prompt, { cacheSalt: 'tenant' });
  assert.equal(s2.worker.id, s.worker.id);
  assert.equal(s2.overlapBlocks, 8);
  s2.done();
  // Heavy decode load on worker 2 outweighs its 6 cached blocks.
  r.load.add(r.slots.get(2)!.slot, LoadField.DecodeBlocks, 100);
  const d2 = await routeNow(r, prompt);
  assert.notEqual(d2.worker.id, 2);
  r.close();
});

test('modes: round-robin, random, least-loaded, power-of-two, direct; unknown worker id is a 400', async () => {
  const rr = new ModelRouter(pool(3), { mode: 'round-robin' });
  const ids = [];
  for (let i = 0; i < 6; i++) ids.push((await routeNow(rr, seq(8))).worker.id);
  assert.deepEqual(ids, [0, 1, 2, 0, 1, 2]);
  const ll = new ModelRouter(pool(3), { mode: 'least-loaded' });
  const held = [];
  for (let i = 0; i < 3; i++) held.push(await routeNow(ll, seq(8)));
  assert.deepEqual(held.map((d) => d.worker.id).sort(), [0, 1, 2]);
  held[1]!.done();
  assert.equal((await routeNow(ll, seq(8))).worker.id, held[1]!.worker.id);
  const p2 = new ModelRouter(pool(2), { mode: 'power-of-two' });
  const a = await routeNow(p2, seq(8));
  assert.notEqual((await routeNow(p2, seq(8))).worker.id, a.worker.id, 'with two workers, p2c sees both');
  const rnd = new ModelRouter(pool(4), { mode: 'random' });
  const seen = new Set<number>();
  for (let i = 0; i < 100; i++) seen.add((await routeNow(rnd, seq(8))).worker.id);
  assert.equal(seen.size, 4);
  const direct = new ModelRouter(pool(2), { mode: 'direct' });
  assert.throws(() => direct.route({ tokens: seq(8), hints: {} }), DirectRouteError);
  assert.equal((await routeNow(direct, seq(8), { workerId: 1 })).worker.id, 1);
  assert.throws(() => direct.route({ tokens: seq(8), hints: { workerId: 9 } }), (e: unknown) => e instanceof UnknownWorkerError && e.apiStatus === 400);
});

test('session affinity pins a session to its worker until the TTL passes', async () => {
  let now = 0;
  const r = new ModelRouter(pool(4), { mode: 'round-robin', sessionAffinityTtlSecs: 10 }, { now: () => now });
  const first = (await routeNow(r, seq(8), { sessionId: 's1' })).worker.id;
  for (let i = 0; i < 5; i++) {
    now += 5000;
    assert.equal((await routeNow(r, seq(8), { sessionId: 's1' })).worker.id, first);
  }
  now += 11_000;
  await routeNow(r, seq(8)); // moves the rotation on
  const after = (await routeNow(r, seq(8), { sessionId: 's1' })).worker.id;
  assert.notEqual(after, first, 'expired: routed afresh');
});

test('queue: waits while every worker is busy, strict tier first, then rejects when full or timed out', async () => {
  const r = new ModelRouter(pool(1), { mode: 'round-robin', queueThreshold: 1, maxBatchedTokens: 8, queueMaxSize: 2, queueTimeoutSecs: 0.2, queueRejectStatus: 529, retryAfterSecs: 3 });
  const lengths: number[] = [];
  const busy = await routeNow(r, seq(8)); // 8 prefill tokens: busy
  const order: string[] = [];
  const low = (r.route({ tokens: seq(8), hints: {} }) as Promise<Dispatch>).then((d) => (order.push('low'), d));
  const high = (r.route({ tokens: seq(8), hints: { strictPriority: 1 } }) as Promise<Dispatch>).then((d) => (order.push('high'), d));
  assert.equal(r.queued, 2);
  assert.throws(() => r.route({ tokens: seq(8), hints: {} }), (e: unknown) => e instanceof QueueRejectedError && e.apiStatus === 529 && e.retryAfter === 3 && /full/.test(e.message));
  busy.firstToken(); // prefill done: not busy, one admitted, which makes it busy again
  const h = await high;
  assert.deepEqual(order, ['high']);
  assert.ok(h.queuedMs >= 0);
  h.firstToken();
  const l = await low;
  assert.deepEqual(order, ['high', 'low']);
  // Timeout.
  const late = r.route({ tokens: seq(8), hints: {} }) as Promise<Dispatch>;
  await assert.rejects(late, (e: unknown) => e instanceof QueueRejectedError && e.code === 'router_queue_timeout');
  // Abort while queued.
  const ac = new AbortController();
  const gone = r.route({ tokens: seq(8), hints: {}, signal: ac.signal }) as Promise<Dispatch>;
  ac.abort(new Error('client went away'));
  await assert.rejects(gone, /client went away/);
  assert.equal(r.queued, 0);
  l.done();
  void lengths;
  r.close();
});

test('busy thresholds set at run time release the queue', async () => {
  const r = new ModelRouter(pool(2), { activePrefillTokensThreshold: 4 });
  const a = await routeNow(r, seq(8));
  const b = await routeNow(r, seq(8));
  const waiting = r.route({ tokens: seq(8), hints: {} });
  assert.ok(waiting instanceof Promise);
  r.setThresholds({ activePrefillTokens: 100 });
  const c = await waiting;
  assert.equal(r.queued, 0);
  for (const d of [a, b, c]) d.done();
  r.close();
});

test('output block tracking grows decode blocks toward agent_hints.osl', async () => {
  const r = new ModelRouter(pool(1), { blockSize: BS, trackOutputBlocks: true });
  const d = await routeNow(r, seq(8), { osl: 10 }); // 2 prompt blocks + 3 placeholder blocks
  const slot = r.slots.get(0)!.slot;
  assert.equal(r.load.get(slot, LoadField.DecodeBlocks), 5);
  d.output(9);
  assert.equal(r.load.get(slot, LoadField.DecodeBlocks), 5);
  d.output(17); // past the osl: 5 output blocks
  assert.equal(r.load.get(slot, LoadField.DecodeBlocks), 7);
  d.done();
  assert.equal(r.load.get(slot, LoadField.DecodeBlocks), 0);
  const u = await routeNow(r, seq(8));
  u.output(5);
  assert.equal(r.load.get(slot, LoadField.DecodeBlocks), 4);
  u.done();
  r.close();
});

test('index table: many keys, interleaved removes, against a Map model', () => {
  const idx = new KvIndex(4);
  const model = new Map<number, number[]>();
  let s = 7;
  const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const keys = blockKeys(Uint32Array.from({ length: 20000 }, (_, i) => i), 4, root);
  // Force bucket collisions too: keys equal in their low 32 bits.
  const twins = Array.from({ length: 50 }, (_, i) => (i + 1) * 4294967296 + 12345);
  const all = [...keys, ...twins];
  for (let round = 0; round < 30000; round++) {
    const k = all[Math.floor(rnd() * all.length)]!;
    const slot = Math.floor(rnd() * 5);
    if (rnd() < 0.6) {
      idx.add(k, slot);
      model.set(k, [...(model.get(k) ?? []), slot]);
    } else {
      const h = model.get(k);
      const had = !!h && h.includes(slot);
      assert.equal(idx.remove(k, slot), had);
      if (had) {
        h!.splice(h!.indexOf(slot), 1);
        if (h!.length === 0) model.delete(k);
      }
    }
  }
  assert.equal(idx.size, model.size);
  for (const k of all) for (let slot = 0; slot < 5; slot++) assert.equal(idx.holds(k, slot), model.get(k)?.includes(slot) ?? false);
});

test('hash: the inlined request path equals block-by-block chaining (as events are re-hashed)', async () => {
  const { chainBlock, keyOf } = await import('../src/router/hash.js');
  const t = Uint32Array.from({ length: 100 }, (_, i) => (i * 2654435761) >>> 0);
  const r = rootLanes(3, 'salt');
  const cur = { a: r.a, b: r.b };
  const keys = blockKeys(t, 8, r);
  for (let i = 0; i < keys.length; i++) {
    chainBlock(cur, t, i * 8, 8, cur);
    assert.equal(keys[i], keyOf(cur.a, cur.b));
  }
});

test('priority reaches each engine in its polarity', async () => {
  const { enginePriority } = await import('../src/router/priority.js');
  assert.equal(enginePriority('sglang', 5), 5);
  assert.equal(enginePriority('sglang', 5, true), -5);
  assert.equal(enginePriority('vllm', 5), -5);
  assert.equal(enginePriority('vllm', undefined), undefined);
});

test('speculative prefill: the next-turn body appends the reply to the messages, bytes kept', async () => {
  const { nextTurnBody } = await import('../src/pipeline/speculative-prefill.js');
  const src = '{"model":"m","messages":[{"role":"user","content":"héllo"}],"tools":[{"type":"function","function":{"name":"f"}}],"x":1}';
  const body = Buffer.from(src);
  const ms = src.indexOf('[{"role"');
  const me = src.indexOf('}],"tools"') + 2;
  const ts = src.indexOf('[{"type"');
  const te = src.indexOf('}}],"x"') + 3;
  const n = nextTurnBody(body, { start: Buffer.byteLength(src.slice(0, ms)), end: Buffer.byteLength(src.slice(0, me)) }, { start: Buffer.byteLength(src.slice(0, ts)), end: Buffer.byteLength(src.slice(0, te)) }, 'a "reply"');
  const j = JSON.parse(n.body.toString());
  assert.deepEqual(j.messages, [{ role: 'user', content: 'héllo' }, { role: 'assistant', content: 'a "reply"' }, { role: 'user', content: '' }]);
  assert.deepEqual(JSON.parse(n.body.subarray(n.messages.start, n.messages.end).toString()), j.messages);
  assert.deepEqual(JSON.parse(n.body.subarray(n.tools!.start, n.tools!.end).toString()), j.tools);
  const empty = nextTurnBody(Buffer.from('{"messages":[ ]}'), { start: 12, end: 15 }, null, 'r');
  assert.deepEqual(JSON.parse(empty.body.toString()).messages, [{ role: 'assistant', content: 'r' }, { role: 'user', content: '' }]);
});

test('in-flight blocks: indexed at once, gone after their TTL, dropped with their worker', async () => {
  const { InflightBlocks } = await import('../src/router/inflight.js');
  let now = 0;
  const idx = new KvIndex();
  const f = new InflightBlocks(idx, 2000, () => now);
  const k = blockKeys(seq(16), BS, root);
  // Inserts name a holder (worker slot, DP rank); drop names a worker slot (every rank).
  f.insert(holderOf(1, 0), k);
  now = 1000;
  f.insert(holderOf(2, 1), k.subarray(0, 2));
  const ov = new Uint32Array(3 * MAX_DP_RANKS);
  const seen = () => [holderOf(0, 0), holderOf(1, 0), holderOf(2, 1)].map((h) => ov[h]);
  idx.match(k, ov);
  assert.deepEqual(seen(), [0, 4, 2]);
  now = 2500;
  f.sweep();
  idx.match(k, ov);
  assert.deepEqual(seen(), [0, 0, 2]);
  f.drop(2);
  assert.equal(idx.size, 0);
  now = 5000;
  f.sweep();
  assert.equal(f.pending, 0);
});

function dpPool(n: number, dpSize: number): WorkerPool {
  const clients = Array.from({ length: n }, (_, i) => ({
    url: `grpc://fake-dp-${i}:1`,
    health: async () => true,
    serverInfo: async () => ({ maxTotalNumTokens: 1600, serverArgs: { dp_size: dpSize } }),
    close() {},
  }) as unknown as EngineClient);
  const p = new WorkerPool(clients, { model: 'm' });
  for (const w of p.workers) w.healthy = true;
  return p;
}

test('index per DP rank: a rank\'s events index under (worker, rank); another rank of the same worker does not match; bad ranks are dropped', () => {
  const idx = new KvIndex();
  const ing = new WorkerKvIngest(idx, 1, BS);
  const prompt = seq(12);
  ing.apply(stored(undefined, [[1n, [1, 2, 3, 4]], [2n, [5, 6, 7, 8]]], 1));
  ing.apply(stored(undefined, [[9n, [1, 2, 3, 4]]], 0));
  const ov = new Uint32Array(2 * MAX_DP_RANKS);
  idx.match(blockKeys(prompt, BS, root), ov);
  assert.equal(ov[holderOf(1, 1)], 2, 'rank 1 holds two blocks');
  assert.equal(ov[holderOf(1, 0)], 1, 'rank 0 holds one');
  assert.equal(ov[holderOf(0, 1)], 0);
  assert.equal(ing.rankCount, 2);
  ing.apply({ kind: 'cleared', worker: 'w', dpRank: 1 });
  idx.match(blockKeys(prompt, BS, root), ov);
  assert.deepEqual([ov[holderOf(1, 0)], ov[holderOf(1, 1)]], [1, 0], 'clearing rank 1 leaves rank 0');
  ing.apply(stored(undefined, [[3n, [1, 2, 3, 4]]], MAX_DP_RANKS));
  assert.equal(ing.stats.badRank, 1);
  ing.apply({ kind: 'reset', worker: 'w', reason: 'gap' });
  assert.equal(idx.size, 0);
});

test('kv mode with DP ranks: the request is pinned to the rank holding its prefix; dp_rank overrides; out-of-range dp_rank is a 400', async () => {
  const p = dpPool(2, 4);
  const sinks: ((e: KvEvent[]) => void)[] = [];
  const r = new ModelRouter(p, { mode: 'kv', blockSize: BS }, { kvSource: (o) => (sinks.push(o.sink), { worker: o.url, stats: {} as never, start() {}, close() {} }) });
  await new Promise((res) => setImmediate(res)); // server info (dp_size) arrives
  const prompt = seq(32);
  const blocks: [bigint, number[]][] = [];
  for (let i = 0; i < 6; i++) blocks.push([BigInt(2000 + i), [...prompt.subarray(i * BS, (i + 1) * BS)]]);
  // Worker 1 holds 6 blocks on rank 2 and 1 block on rank 0.
  sinks[1]!([stored(undefined, blocks, 2), stored(undefined, blocks.slice(0, 1), 0)]);
  const d = await routeNow(r, prompt);
  assert.equal(d.worker.id, 1);
  assert.equal(d.dpRank, 2);
  assert.equal(d.overlapBlocks, 6);
  d.done();
  // The client names rank 0: pinned there, and the overlap counted is rank 0's.
  const o = await routeNow(r, prompt, { workerId: 1, dpRank: 0 });
  assert.equal(o.dpRank, 0);
  assert.equal(o.overlapBlocks, 1);
  o.done();
  assert.throws(() => r.route({ tokens: prompt, hints: { workerId: 1, dpRank: 4 } }), (e: unknown) => e instanceof DpRankError && e.apiStatus === 400 && /worker 1 has 4 data-parallel ranks/.test(e.message));
  r.close();
});

test('kv mode with DP ranks and no events: new prefixes spread over the ranks, and each prefix comes back to its rank', async () => {
  const r = new ModelRouter(dpPool(1, 3), { mode: 'kv', blockSize: BS, kvEvents: false });
  await new Promise((res) => setImmediate(res));
  const held: Dispatch[] = [];
  for (let i = 0; i < 3; i++) held.push(await routeNow(r, seq(16, 100 * (i + 1))));
  assert.deepEqual(held.map((d) => d.dpRank).sort(), [0, 1, 2], 'ties on overlap go to the rank with fewest pinned requests');
  for (let i = 0; i < 3; i++) {
    const again = await routeNow(r, seq(16, 100 * (i + 1)));
    assert.equal(again.dpRank, held[i]!.dpRank, `prefix ${i} follows its predicted blocks`);
    assert.equal(again.overlapBlocks, 4);
    again.done();
  }
  for (const d of held) d.done();
  r.close();
});

test('embeddings (ephemeral requests) count as load but leave no predicted blocks', async () => {
  const r = new ModelRouter(pool(2), { mode: 'kv', blockSize: BS, kvEvents: false });
  const d = await r.route({ tokens: seq(16), hints: {}, ephemeral: true });
  assert.equal(r.load.get(r.slots.get(d.worker.id)!.slot, LoadField.PrefillTokens), 16);
  assert.equal(r.index.size, 0);
  d.done();
  assert.equal(r.load.get(r.slots.get(d.worker.id)!.slot, LoadField.PrefillTokens), 0);
  r.close();
});
