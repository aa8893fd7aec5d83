// Two routers sharing a load table and a queue count, as two server shards do
// (--shards): each sees the other's load, a worker added later does not wipe what
// the other shard already counts on it, and the queue bound holds for both together.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ModelRouter } from '../src/router/router.js';
import { LoadField, LoadTable } from '../src/router/load-table.js';
import { QueueRejectedError } from '../src/router/errors.js';
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
  await a.pool.add(fakeClient(7));
  await b.pool.add(fakeClient(7));
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
