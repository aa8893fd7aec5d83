// Two routers sharing a load table, a queue count and session pins, as two server
// shards do (--shards): each sees the other's load, a worker added later does not wipe
// what the other shard already counts on it, the queue bound holds for both together,
// and a session pinned by one is found by the other.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ModelRouter } from '../src/router/router.js';
import { LoadField, LoadTable } from '../src/router/load-table.js';
import { QueueRejectedError } from '../src/router/errors.js';
import { SharedSessionAffinity } from '../src/router/shared-session-affinity.js';
import { WorkerPool } from '../src/router/worker-pool.js';
import type { EngineClient } from '../src/engine/types.js';

function fakeClient(i: number): EngineClient {
  return { url: `grpc://fake-${i}:1`, health: async () => true, serverInfo: async () => ({ maxTotalNumTokens: 1600 }), close() {} } as unknown as EngineClient;
}

function pool(n: number): WorkerPool {
  const p = new WorkerPool(Array.from({ length: n }, (_, i) => fakeClient(i)), { model: 'm' });
  for (const w of p.workers) w.healthy = true;
  return p;
}

function shards(opts: ConstructorParameters<typeof ModelRouter>[1], n = 2) {
  const load = new LoadTable(64).buffer;
  const queueDepth = new Int32Array(new SharedArrayBuffer(4));
  const make = () => new ModelRouter(pool(n), { maxWorkers: 64, ...opts }, { loadBuffer: load, queueDepth });
  return { a: make(), b: make(), queueDepth };
}

const tokens = Uint32Array.from({ length: 32 }, (_, i) => i + 1);

test('least-loaded: a shard sees the requests another shard dispatched', async () => {
  const { a, b } = shards({ mode: 'least-loaded' });
  const first = await a.route({ tokens, hints: {} });
  for (let i = 0; i < 4; i++) {
    const d = await b.route({ tokens, hints: {} });
    assert.notEqual(d.worker.id, first.worker.id, 'shard b avoids the worker shard a loaded');
    d.done();
  }
  assert.equal(b.load.get(b.slots.get(first.worker.id)!.slot, LoadField.Requests), 1);
  first.done();
  assert.equal(b.load.get(b.slots.get(first.worker.id)!.slot, LoadField.Requests), 0);
  a.close();
  b.close();
});

test('a worker added to both shards: the shard that tracks it later keeps the other shard\'s load on it', async () => {
  const { a, b } = shards({ mode: 'round-robin' });
  await (a.pool as WorkerPool).add(fakeClient(7));
  await (b.pool as WorkerPool).add(fakeClient(7));
  const d = await a.route({ tokens, hints: { workerId: 2 } });
  assert.equal(d.worker.id, 2);
  // Shard b meets worker 2 only now (its view follows the pool lazily).
  const slot = b.slots.get(2)!.slot;
  assert.equal(slot, a.slots.get(2)!.slot, 'same worker, same row');
  assert.equal(b.load.get(slot, LoadField.Requests), 1, 'not zeroed by shard b');
  d.done();
  assert.equal(b.load.get(slot, LoadField.Requests), 0);
  a.close();
  b.close();
});

test('queue max size bounds the requests waiting in both shards together', async () => {
  const { a, b, queueDepth } = shards({ mode: 'round-robin', activePrefillTokensThreshold: 0, queueMaxSize: 1, queueTimeoutSecs: 60 });
  const waiting = a.route({ tokens, hints: {} });
  assert.ok(waiting instanceof Promise, 'every worker is busy: the request waits');
  const failed = (waiting as Promise<unknown>).catch((e: unknown) => e);
  assert.equal(Atomics.load(queueDepth, 0), 1);
  assert.throws(() => b.route({ tokens, hints: {} }), (e: unknown) => e instanceof QueueRejectedError && e.code === 'router_queue_full');
  a.close();
  assert.ok((await failed) instanceof Error, 'closing rejects the waiting request');
  assert.equal(Atomics.load(queueDepth, 0), 0, 'the count follows the queue');
  b.close();
});

test('session pins are shared: a session pinned by one shard goes to the same worker from the other', async () => {
  const sessions = SharedSessionAffinity.buffer(1024);
  const load = new LoadTable(64).buffer;
  const make = () => new ModelRouter(pool(3), { mode: 'round-robin', maxWorkers: 64, sessionAffinityTtlSecs: 60 }, { loadBuffer: load, sessionTable: sessions });
  const a = make();
  const b = make();
  (await a.route({ tokens, hints: {} })).done(); // shard a's rotation moves on to worker 1
  const first = await a.route({ tokens, hints: { sessionId: 'conversation-1' } });
  assert.equal(first.worker.id, 1, 'shard b alone would start its rotation at worker 0');
  for (let i = 0; i < 4; i++) {
    const d = await b.route({ tokens, hints: { sessionId: 'conversation-1' } });
    assert.equal(d.worker.id, first.worker.id, 'shard b follows the pin shard a made');
    d.done();
  }
  // Without the session, round-robin moves on.
  const ids = new Set<number>();
  for (let i = 0; i < 3; i++) ids.add((await b.route({ tokens, hints: {} })).worker.id);
  assert.equal(ids.size, 3);
  first.done();
  a.close();
  b.close();
});

test('shared session table: pin, lookup, expiry, a colliding session replaces the entry, forgetWorker', () => {
  let now = 1_000_000;
  const t = new SharedSessionAffinity(SharedSessionAffinity.buffer(1), 100, () => now);
  const other = new SharedSessionAffinity(SharedSessionAffinity.buffer(4), 100, () => now);
  assert.equal(t.lookup('s1'), undefined);
  t.pin('s1', 7);
  assert.equal(t.lookup('s1'), 7);
  assert.equal(t.lookup('s2'), undefined, 'another session does not match');
  now += 100;
  assert.equal(t.lookup('s1'), undefined, 'expired after the TTL');
  t.pin('s1', 7);
  t.pin('s2', 8); // one entry only: s2 takes it
  assert.equal(t.lookup('s1'), undefined);
  assert.equal(t.lookup('s2'), 8);
  t.forgetWorker(8);
  assert.equal(t.lookup('s2'), undefined);
  other.pin('a', 1);
  other.pin('b', 2);
  other.forgetWorker(1);
  assert.equal(other.lookup('a'), undefined);
  assert.equal(other.lookup('b'), 2, 'forgetting one worker keeps the others');
  assert.throws(() => new SharedSessionAffinity(new SharedArrayBuffer(3 * 24), 1), /power of two/);
});
