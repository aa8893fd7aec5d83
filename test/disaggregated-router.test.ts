// A model's router across worker roles: a request chosen onto a decode worker gets a
// prefill leg from the prefill pool (KV-aware there, each pool with its own queue); pins
// name each side; wrong-role, unknown and down pins are errors naming the field; with no
// prefill worker a vLLM decode worker serves alone (counted) unless enforced, an SGLang
// decode worker cannot.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ModelRouter } from '../src/router/router.js';
import { DisaggregatedRouter, PinError, NoPrefillWorkerError } from '../src/router/disaggregated-router.js';
import { WorkerPool, type WorkerRole } from '../src/router/worker-pool.js';
import type { RouterOptions } from '../src/router/options.js';
import type { EngineClient, EngineDisaggregation } from '../src/engine/types.js';
import type { KvEvent } from '../src/engine/kv-events/index.js';

const seq = (n: number, from = 1) => Uint32Array.from({ length: n }, (_, i) => from + i);

interface Spec {
  role: WorkerRole;
  url?: string;
  /** What the engine declares (server info). */
  declares?: EngineDisaggregation;
}

function client(i: number, s: Spec): EngineClient {
  return {
    url: s.url ?? `grpc://w${i}:1`,
    health: async () => true,
    serverInfo: async () => ({ maxTotalNumTokens: 4096, serverArgs: { block_size: 16 }, disaggregation: s.declares ?? { role: null } }),
    close() {},
  } as unknown as EngineClient;
}

async function setup(specs: Spec[], opts: Partial<RouterOptions> = { mode: 'round-robin' }, o: { enforce?: boolean } = {}) {
  const pool = new WorkerPool(specs.map((s, i) => ({ client: client(i, s), role: s.role })), { model: 'm' });
  await pool.start();
  pool.close = () => {};
  const sinks = new Map<string, (e: KvEvent[]) => void>();
  const kvSource = (x: { url: string; sink: (e: KvEvent[]) => void }) => (sinks.set(x.url, x.sink), { worker: x.url, stats: {} as never, start() {}, close() {} });
  const main = new ModelRouter(pool.view(['aggregated', 'decode']), opts, { kvSource });
  const prefill = new ModelRouter(pool.view(['prefill']), opts, { kvSource });
  let fallbacks = 0;
  const r = new DisaggregatedRouter(pool, main, prefill, { enforce: o.enforce ?? false, onFallback: () => fallbacks++ });
  return { pool, r, sinks, fallbacks: () => fallbacks };
}

function stored(prompt: Uint32Array, blocks: number, base: number): KvEvent {
  const out = [];
  for (let i = 0; i < blocks; i++) out.push({ hash: BigInt(base + i), tokenIds: [...prompt.subarray(i * 16, (i + 1) * 16)] });
  return { kind: 'stored', worker: 'w', dpRank: 0, parentHash: undefined, blocks: out, blockSize: 16 };
}

test('an aggregated-only model routes as before: no prefill leg', async () => {
  const { r } = await setup([{ role: 'aggregated' }, { role: 'aggregated' }]);
  const d = await r.route({ tokens: seq(32), hints: {} });
  assert.equal(d.prefill, undefined);
  assert.equal(d.worker.role, 'aggregated');
  d.done();
});

test('a decode worker\'s request gets a prefill worker; both are counted in their own pool', async () => {
  const { r } = await setup([{ role: 'prefill' }, { role: 'decode' }, { role: 'decode' }]);
  const d = await r.route({ tokens: seq(32), hints: {} });
  assert.equal(d.worker.role, 'decode');
  assert.ok(d.prefill);
  assert.equal(d.prefill.worker.id, 0);
  assert.equal(r.prefill.slots.list.length, 1);
  assert.equal(r.main.slots.list.length, 2);
  d.prefill.done();
  d.done();
});

test('kv mode: the prefill worker holding the prompt\'s prefix is chosen, from the prefill workers\' events', async () => {
  const { r, sinks } = await setup([{ role: 'prefill' }, { role: 'prefill' }, { role: 'decode' }], { mode: 'kv', blockSize: 16 });
  const prompt = seq(128, 7);
  sinks.get('grpc://w1:1')!([stored(prompt, 6, 900)]);
  for (let i = 0; i < 4; i++) {
    const d = await r.route({ tokens: prompt, hints: {} });
    assert.equal(d.prefill?.worker.id, 1);
    // Its events hold 6 blocks; after the first dispatch the router counts the whole prompt there.
    assert.equal(d.prefill?.overlapBlocks, i === 0 ? 6 : 8);
    d.prefill!.done();
    d.done();
  }
});

test('pins: decode_worker_id and prefill_worker_id (with its dp rank) choose each side', async () => {
  const { r } = await setup([{ role: 'prefill' }, { role: 'prefill' }, { role: 'decode' }, { role: 'decode' }]);
  const d = await r.route({ tokens: seq(32), hints: { workerId: 3, prefillWorkerId: 1, prefillDpRank: 0 } });
  assert.equal(d.worker.id, 3);
  assert.equal(d.prefill?.worker.id, 1);
  assert.equal(d.prefill?.dpRank, 0);
  d.prefill!.done();
  d.done();
});

test('bad pins: wrong role, unknown and down are errors naming the field', async () => {
  const { pool, r } = await setup([{ role: 'prefill' }, { role: 'decode' }]);
  const fails = (hints: object, status: number, code: string, param: string) => {
    assert.throws(
      () => r.validate(hints),
      (e: unknown) => e instanceof PinError && e.apiStatus === status && e.code === code && e.param === param,
      JSON.stringify(hints),
    );
  };
  fails({ prefillWorkerId: 1 }, 400, 'wrong_worker_role', 'nvext.prefill_worker_id');
  fails({ workerId: 0 }, 400, 'wrong_worker_role', 'nvext.decode_worker_id');
  fails({ prefillWorkerId: 42 }, 400, 'unknown_worker', 'nvext.prefill_worker_id');
  fails({ workerId: 42 }, 400, 'unknown_worker', 'nvext.decode_worker_id');
  pool.workers[0]!.healthy = false;
  fails({ prefillWorkerId: 0 }, 503, 'worker_unavailable', 'nvext.prefill_worker_id');
  // The same through route(): nothing is left counted on the decode worker.
  await assert.rejects(Promise.resolve().then(() => r.route({ tokens: seq(16), hints: { prefillWorkerId: 0 } })), (e: unknown) => e instanceof PinError && e.apiStatus === 503);
  assert.equal(pool.workers[1]!.inflight, 0);
});

test('a body prefill pin on a model with no prefill workers is a 400; header pins are only dropped', async () => {
  const { r } = await setup([{ role: 'aggregated' }]);
  assert.throws(() => r.validate({ prefillWorkerId: 0, prefillPinnedInBody: true }), (e: unknown) => e instanceof PinError && e.code === 'unsupported_parameter' && e.param === 'nvext.prefill_worker_id');
  r.validate({ prefillWorkerId: 0, prefillPinnedInBody: false });
  const d = await r.route({ tokens: seq(16), hints: { prefillWorkerId: 0 } });
  assert.equal(d.prefill, undefined);
  d.done();
});

test('no healthy prefill worker: an SGLang decode worker cannot serve alone (503)', async () => {
  const { pool, r } = await setup([{ role: 'prefill' }, { role: 'decode' }]);
  pool.workers[0]!.healthy = false;
  await assert.rejects(Promise.resolve().then(() => r.route({ tokens: seq(16), hints: {} })), (e: unknown) => e instanceof NoPrefillWorkerError && e.apiStatus === 503);
  assert.equal(r.main.load.get(r.main.slots.get(1)!.slot, 2), 0, 'the decode dispatch was given back');
});

test('no healthy prefill worker: a vLLM decode worker serves alone (counted), unless --disagg-enforce', async () => {
  const specs: Spec[] = [{ role: 'prefill', url: 'vllm+grpc://p:1' }, { role: 'decode', url: 'vllm+grpc://d:1' }];
  const a = await setup(specs);
  a.pool.workers[0]!.healthy = false;
  const d = await a.r.route({ tokens: seq(16), hints: {} });
  assert.equal(d.prefill, undefined);
  assert.equal(a.fallbacks(), 1);
  d.done();
  const b = await setup(specs, { mode: 'round-robin' }, { enforce: true });
  b.pool.workers[0]!.healthy = false;
  await assert.rejects(Promise.resolve().then(() => b.r.route({ tokens: seq(16), hints: {} })), NoPrefillWorkerError);
});

test('the engine\'s declared role wins over the configured one (a bare --worker that is a prefill server)', async () => {
  const { pool, r } = await setup([{ role: 'aggregated', declares: { role: 'prefill', bootstrapPort: 9100 } }, { role: 'decode' }]);
  assert.equal(pool.workers[0]!.role, 'prefill');
  assert.equal(pool.workers[0]!.configuredRole, 'aggregated');
  assert.equal(pool.workers[0]!.engine?.bootstrapPort, 9100);
  assert.equal(pool.disaggregated, true);
  const d = await r.route({ tokens: seq(16), hints: {} });
  assert.equal(d.worker.id, 1);
  assert.equal(d.prefill?.worker.id, 0);
  d.prefill!.done();
  d.done();
});

test('each pool has its own queue: a busy prefill pool holds the prefill leg, not the decode choice', async () => {
  const { r } = await setup([{ role: 'prefill' }, { role: 'decode' }], { mode: 'round-robin', activePrefillTokensThreshold: 10 });
  // The decode side never counts as busy here: a decode worker's prefill tokens are the transfer's.
  const first = await r.route({ tokens: seq(64), hints: {} });
  assert.equal(first.prefill?.worker.id, 0);
  const second = r.route({ tokens: seq(64, 100), hints: {} });
  assert.ok(second instanceof Promise, 'the second request waits for the prefill pool');
  assert.equal(r.prefill.queued, 1);
  assert.equal(r.main.queued, 0);
  first.prefill!.firstToken();
  const d2 = await second;
  assert.equal(d2.prefill?.worker.id, 0);
  for (const d of [first, d2]) {
    d.prefill!.done();
    d.done();
  }
});
