// Each worker is hashed and indexed at its own KV block size: what its KV events carry,
// else what its engine declares, else --router-block-size. A router whose fallback is
// wrong for the engines (vLLM's CPU default is 128, SGLang's page size is 1) still
// finds the prefixes, and events it cannot index are counted and reported.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ModelRouter } from '../src/router/router.js';
import { KvIndex } from '../src/router/kv-index.js';
import { WorkerKvIngest } from '../src/router/kv-ingest.js';
import { blockKeys, rootLanes } from '../src/router/hash.js';
import { LoadField } from '../src/router/load-table.js';
import { WorkerPool } from '../src/router/worker-pool.js';
import { declaredMismatch } from '../src/router/worker-slots.js';
import type { EngineClient } from '../src/engine/types.js';
import type { KvEvent } from '../src/engine/kv-events/index.js';

const seq = (n: number, from = 1) => Uint32Array.from({ length: n }, (_, i) => from + i);

/** Workers whose engines declare these block sizes (0: the engine says nothing). */
function poolOf(declared: number[]): WorkerPool {
  const clients = declared.map(
    (bs, i) =>
      ({
        url: `grpc://bs-${i}:1`,
        health: async () => true,
        serverInfo: async () => ({ maxTotalNumTokens: 4096, serverArgs: bs > 0 ? { block_size: bs } : {} }),
        close() {},
      }) as unknown as EngineClient,
  );
  const p = new WorkerPool(clients, { model: 'm' });
  for (const w of p.workers) w.healthy = true;
  return p;
}

function kvRouter(declared: number[], fallback = 16) {
  const sinks: ((e: KvEvent[]) => void)[] = [];
  const r = new ModelRouter(poolOf(declared), { mode: 'kv', blockSize: fallback }, { kvSource: (o) => (sinks.push(o.sink), { worker: o.url, stats: {} as never, start() {}, close() {} }) });
  return { r, sinks };
}

/** One stored event holding `prompt`'s first `blocks` blocks of `bs` tokens (engine hashes from `base`). */
function storedPrefix(prompt: Uint32Array, bs: number, blocks: number, base: number, statedSize = bs): KvEvent {
  const out = [];
  for (let i = 0; i < blocks; i++) out.push({ hash: BigInt(base + i), tokenIds: [...prompt.subarray(i * bs, (i + 1) * bs)] });
  return { kind: 'stored', worker: 'w', dpRank: 0, parentHash: undefined, blocks: out, blockSize: statedSize };
}

const infoArrives = () => new Promise((res) => setImmediate(res));

test('a worker declaring 128-token blocks is matched in 128-token blocks, with --router-block-size left at 16', async () => {
  const { r, sinks } = kvRouter([128, 128]);
  await infoArrives();
  assert.equal(r.slots.get(0)!.ingest.blockSize, 128);
  assert.equal(r.slots.get(0)!.ingest.blockSizeSource, 'engine');
  const prompt = seq(640);
  sinks[1]!([storedPrefix(prompt, 128, 4, 500)]);
  assert.equal(r.slots.get(1)!.ingest.blocks, 4, 'the 128-token blocks are indexed, not dropped');
  assert.equal(r.slots.get(1)!.ingest.stats.badSize, 0);
  const d = await r.route({ tokens: prompt, hints: {} });
  assert.equal(d.worker.id, 1);
  assert.equal(d.overlapBlocks, 4);
  const slot = r.slots.get(1)!.slot;
  assert.equal(r.load.get(slot, LoadField.PrefillTokens), 640 - 4 * 128, 'load is counted in the worker\'s own blocks');
  assert.equal(r.load.get(slot, LoadField.DecodeBlocks), 1);
  assert.equal(r.load.get(slot, LoadField.CapacityBlocks), 4096 / 128);
  d.done();
  r.close();
});

test('SGLang\'s page size 1: one-token blocks index and match', async () => {
  const { r, sinks } = kvRouter([1, 1, 1]);
  await infoArrives();
  const prompt = seq(50, 7);
  sinks[2]!([storedPrefix(prompt, 1, 40, 9000)]);
  const d = await r.route({ tokens: prompt, hints: {} });
  assert.equal(d.worker.id, 2);
  assert.equal(d.overlapBlocks, 40);
  d.done();
  r.close();
});

test('an engine that declares nothing: its first KV event sets its block size', async () => {
  const { r, sinks } = kvRouter([0, 0]);
  await infoArrives();
  assert.equal(r.slots.get(0)!.ingest.blockSizeSource, 'fallback');
  const prompt = seq(256);
  sinks[0]!([storedPrefix(prompt, 64, 3, 100)]);
  const ing = r.slots.get(0)!.ingest;
  assert.equal(ing.blockSize, 64);
  assert.equal(ing.blockSizeSource, 'events');
  assert.equal(ing.blocks, 3);
  const d = await r.route({ tokens: prompt, hints: {} });
  assert.equal(d.worker.id, 0);
  assert.equal(d.overlapBlocks, 3);
  d.done();
  r.close();
});

test('events that arrive before the server info keep their size; the engine\'s differing declaration is reported, not applied', async () => {
  const sinks: ((e: KvEvent[]) => void)[] = [];
  let answer: (v: unknown) => void = () => {};
  const client = { url: 'grpc://late:1', health: async () => true, serverInfo: () => new Promise((res) => (answer = res)), close() {} } as unknown as EngineClient;
  const p = new WorkerPool([client], { model: 'm' });
  p.workers[0]!.healthy = true;
  const r = new ModelRouter(p, { mode: 'kv', blockSize: 16 }, { kvSource: (o) => (sinks.push(o.sink), { worker: o.url, stats: {} as never, start() {}, close() {} }) });
  const prompt = seq(64);
  sinks[0]!([storedPrefix(prompt, 32, 2, 1)]);
  answer({ maxTotalNumTokens: 0, serverArgs: { block_size: 16 } });
  await infoArrives();
  const ing = r.slots.get(0)!.ingest;
  assert.equal(ing.blockSize, 32);
  assert.equal(declaredMismatch(r.slots.get(0)!), 16);
  assert.equal(ing.blocks, 2);
  r.close();
});

test('workers of different block sizes under one model: each prefix is found on its worker', async () => {
  const { r, sinks } = kvRouter([8, 32]);
  await infoArrives();
  const a = seq(256, 1);
  const b = seq(256, 5000);
  sinks[0]!([storedPrefix(a, 8, 30, 100)]);
  sinks[1]!([storedPrefix(b, 32, 7, 200)]);
  const da = await r.route({ tokens: a, hints: {} });
  assert.equal(da.worker.id, 0);
  assert.equal(da.overlapBlocks, 30);
  const db = await r.route({ tokens: b, hints: {} });
  assert.equal(db.worker.id, 1);
  assert.equal(db.overlapBlocks, 7);
  // Pinned to a worker, the overlap is matched in that worker's blocks (all 32 now: the
  // first dispatch's two uncached blocks count as there while in flight).
  const pinned = await r.route({ tokens: a, hints: { workerId: 0 } });
  assert.equal(pinned.overlapBlocks, 32);
  for (const d of [da, db, pinned]) d.done();
  r.close();
});

test('with no KV events, predicted blocks are at the worker\'s declared size', async () => {
  const r = new ModelRouter(poolOf([128, 128]), { mode: 'kv', blockSize: 16, kvEvents: false });
  await infoArrives();
  const prompt = seq(700);
  const first = await r.route({ tokens: prompt, hints: {} });
  first.done();
  const again = await r.route({ tokens: prompt, hints: {} });
  assert.equal(again.worker.id, first.worker.id);
  assert.equal(again.overlapBlocks, 5, '700 tokens hold 5 full 128-token blocks');
  again.done();
  r.close();
});

test('events of another size than the worker\'s are dropped, counted and reported once', () => {
  const idx = new KvIndex();
  const ing = new WorkerKvIngest(idx, 0, 16);
  const reported: string[] = [];
  ing.onUnapplied = (reason) => reported.push(reason);
  const prompt = seq(64);
  ing.apply(storedPrefix(prompt, 16, 2, 1));
  ing.apply(storedPrefix(prompt, 32, 1, 50));
  ing.apply(storedPrefix(prompt, 8, 1, 60));
  assert.equal(ing.stats.badSize, 2);
  assert.equal(ing.unapplied, 2);
  assert.deepEqual(reported, ['badSize'], 'one warning per reason, not one per event');
  assert.equal(ing.blocks, 2);
  const ov = new Uint32Array(1);
  idx.match(blockKeys(prompt, 16, rootLanes()), ov);
  assert.equal(ov[0], 2);
});
