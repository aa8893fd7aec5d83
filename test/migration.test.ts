// Request migration in the one request loop (runGeneration) over fake workers whose next
// token depends only on the ids before it: a request whose worker fails mid-stream goes on
// elsewhere and its output equals, id for id, the same request run without a failure;
// usage counts the generation once; the request's own failures, pins, grammars and long
// sequences are not migrated; the limit ends it with the failure.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Model } from '../src/native/core.js';
import { WorkerPool } from '../src/router/worker-pool.js';
import { ModelRouter } from '../src/router/router.js';
import { ServedModel } from '../src/pipeline/served-model.js';
import { generationRequest } from '../src/pipeline/request.js';
import { runGeneration, type RunningGeneration } from '../src/pipeline/run.js';
import type { ParsedEvent } from '../src/pipeline/outputs.js';
import { FrontendMetrics, modelStats } from '../src/metrics/frontend.js';
import { EngineError } from '../src/engine/errors.js';
import { ApiError } from '../src/protocol/errors.js';
import type { EngineClient, EngineEvent, GenerateParams } from '../src/engine/types.js';
import type { SamplingOptions } from '../src/protocol/sampling.js';
import { QWEN3 } from './helpers/portico.js';

/** The token after `ids`: a function of the last few ids only (as the deterministic mock). */
const next = (ids: ArrayLike<number>) => 1000 + ((ids[ids.length - 1]! * 31 + ids[ids.length - 2]! * 7 + ids.length) % 900);

interface Fault {
  /** Fail after this many tokens of the worker's next stream. */
  after: number;
  err: () => Error;
}

class FakeWorker {
  readonly sent: GenerateParams[] = [];
  faults: Fault[] = [];
  /** Streams wait here before each token when set (a test that must act mid-stream). */
  gate: Promise<void> | null = null;
  constructor(readonly url: string) {}

  client(): EngineClient {
    const self = this;
    return {
      url: this.url,
      health: async () => true,
      serverInfo: async () => ({ maxTotalNumTokens: 100000, serverArgs: {}, disaggregation: { role: null } }),
      close() {},
      generate(p: GenerateParams): AsyncIterable<EngineEvent> {
        self.sent.push(p);
        const fault = self.faults.shift();
        return (async function* () {
          const n = p.n ?? 1;
          const hist = Array.from({ length: n }, () => [...p.inputIds]);
          const max = p.maxNewTokens ?? 16;
          for (let t = 0; t < max; t++) {
            if (fault && t === fault.after) throw fault.err();
            if (self.gate) await self.gate;
            for (let i = 0; i < n; i++) {
              // The choices of one request part at their first token (then each follows its history).
              const id = next(hist[i]!) + (t === 0 ? i : 0);
              hist[i]!.push(id);
              yield { kind: 'chunk', chunk: { tokenIds: [id], promptTokens: p.inputIds.length, completionTokens: t + 1, cachedTokens: 3, index: i } } as EngineEvent;
            }
          }
          for (let i = 0; i < n; i++) yield { kind: 'done', done: { finishReason: 'length', promptTokens: p.inputIds.length, completionTokens: max, cachedTokens: 3, index: i, outputIds: [] } } as EngineEvent;
        })();
      },
    } as unknown as EngineClient;
  }
}

const gone = () => new EngineError('unavailable', 'connection lost', 'grpc://x:1', { health: 'disconnected' });
const reset = () => new EngineError('aborted', 'stream reset', 'grpc://x:1', { health: 'strike' });
const refused = () => new EngineError('invalid_argument', 'bad request', 'grpc://x:1');

const native = Model.load(QWEN3);

function setup(count = 3, migration = { limit: 3, maxSeqLen: 0 }) {
  const workers = Array.from({ length: count }, (_, i) => new FakeWorker(`grpc://w${i}:1`));
  const pool = new WorkerPool(workers.map((w) => w.client()), { model: 'm' });
  for (const w of pool.workers) w.healthy = true;
  const router = new ModelRouter(pool, { mode: 'round-robin' });
  const metrics = new FrontendMetrics();
  const model = new ServedModel('m', native, pool, router, modelStats(metrics, 'm'));
  model.migration = migration;
  return { workers, pool, model, metrics };
}

const PROMPT = Uint32Array.from({ length: 12 }, (_, i) => 500 + i);

async function run(model: ServedModel, sampling: Partial<SamplingOptions> = {}, route = {}) {
  const s: SamplingOptions = { n: 1, maxTokens: 16, ...sampling } as SamplingOptions;
  const req = generationRequest({ model, promptIds: PROMPT, sampling: s, maxTokens: s.maxTokens, requestId: 'r', signal: AbortSignal.timeout(20_000), route, arrived: performance.now(), skipSpecialTokens: true, collectTokenIds: true });
  const events: ParsedEvent[] = [];
  let running: RunningGeneration | undefined;
  await runGeneration(req, { begin: (g) => void (running = g), event: (ev) => void events.push(ev) });
  const finishes = events.filter((e) => e.kind === 'finish') as Extract<ParsedEvent, { kind: 'finish' }>[];
  const end = events.find((e) => e.kind === 'end') as Extract<ParsedEvent, { kind: 'end' }>;
  const text = (i: number) => events.filter((e) => e.kind === 'text' && e.index === i).map((e) => (e as { text: string }).text).join('');
  return { ids: finishes.sort((a, b) => a.index - b.index).map((f) => f.tokenIds), usage: end.usage, text, finishes, worker: running!.worker.id };
}

test('a worker lost mid-stream: the request goes on elsewhere and equals its uninterrupted twin', async () => {
  const twin = await run(setup().model);
  const { workers, model, metrics } = setup();
  workers[0]!.faults.push({ after: 5, err: gone });
  const r = await run(model);
  assert.deepEqual(r.ids, twin.ids);
  assert.equal(r.text(0), twin.text(0));
  assert.deepEqual(r.usage, twin.usage, 'usage counts the generation once');
  const cont = workers[1]!.sent[0]!;
  assert.equal(cont.inputIds.length, PROMPT.length + 5, 'prompt + the 5 ids generated');
  assert.equal(cont.maxNewTokens, 11, 'the rest of the budget');
  assert.equal(r.worker, 1, 'the generation reports the worker it finished on');
  assert.match(metrics.registry.render(), /model_migration_total\{model="m",migration_type="ongoing_request",reason="disconnected"\} 1/);
});

test('n = 2: each unfinished choice continues as its own request, both equal their twins', async () => {
  const twin = await run(setup().model, { n: 2 });
  const { workers, model } = setup();
  workers[0]!.faults.push({ after: 4, err: reset });
  const r = await run(model, { n: 2 });
  assert.deepEqual(r.ids, twin.ids);
  const conts = [...workers[1]!.sent, ...workers[2]!.sent];
  assert.equal(conts.length, 2);
  for (const c of conts) assert.equal(c.n, 1);
  assert.equal(r.usage.completionTokens, 32);
});

test('a failure before any output: the whole request is simply sent elsewhere (new_request)', async () => {
  const twin = await run(setup().model, { n: 2 });
  const { workers, model, metrics } = setup();
  workers[0]!.faults.push({ after: 0, err: gone });
  const r = await run(model, { n: 2 });
  assert.deepEqual(r.ids, twin.ids);
  assert.equal(workers[1]!.sent[0]!.n, 2);
  assert.equal(workers[1]!.sent[0]!.inputIds.length, PROMPT.length);
  assert.match(metrics.registry.render(), /migration_type="new_request",reason="disconnected"\} 1/);
});

test('the request\'s own failure is never migrated', async () => {
  const { workers, model } = setup();
  workers[0]!.faults.push({ after: 2, err: refused });
  await assert.rejects(run(model), (e: unknown) => e instanceof ApiError && e.status === 400);
  assert.equal(workers[1]!.sent.length + workers[2]!.sent.length, 0);
});

test('a request failing on every worker ends with the failure once the workers (or the limit) run out', async () => {
  const { workers, model, metrics } = setup(3, { limit: 2, maxSeqLen: 0 });
  for (const w of workers) w.faults.push({ after: 3, err: gone });
  await assert.rejects(run(model), (e: unknown) => e instanceof ApiError && e.status === 503);
  assert.equal(workers.reduce((s, w) => s + w.sent.length, 0), 3, 'the first try and two migrations');
  assert.match(metrics.registry.render(), /model_migration_exhausted_total\{model="m"\} 1/);
});

test('not migrated: a pinned request, a long one past --migration-max-seq-len, a grammar with output; limit 0 is off', async () => {
  const pinned = setup();
  pinned.workers[1]!.faults.push({ after: 3, err: gone });
  await assert.rejects(run(pinned.model, {}, { workerId: 1 }), ApiError);
  assert.equal(pinned.workers[0]!.sent.length + pinned.workers[2]!.sent.length, 0);

  const long = setup(3, { limit: 3, maxSeqLen: PROMPT.length + 4 });
  long.workers[0]!.faults.push({ after: 6, err: gone });
  await assert.rejects(run(long.model), ApiError);
  assert.match(long.metrics.registry.render(), /model_migration_max_seq_len_exceeded_total\{model="m"\} 1/);

  const grammar = setup();
  grammar.workers[0]!.faults.push({ after: 3, err: gone });
  await assert.rejects(run(grammar.model, { constraint: { kind: 'json_object', value: '' } }), ApiError);

  const off = setup(3, { limit: 0, maxSeqLen: 0 });
  off.workers[0]!.faults.push({ after: 3, err: gone });
  await assert.rejects(run(off.model), ApiError);
  assert.equal(off.workers[1]!.sent.length, 0);
});

test('a worker removed from the pool mid-stream hands its request over', async () => {
  const twin = await run(setup().model);
  const { workers, pool, model } = setup();
  let open!: () => void;
  workers[0]!.gate = new Promise<void>((res) => (open = res));
  const done = run(model);
  while (workers[0]!.sent.length === 0) await new Promise((res) => setImmediate(res));
  assert.ok(pool.remove(pool.workers[0]!.id));
  open();
  const r = await done;
  assert.deepEqual(r.ids, twin.ids);
  assert.equal(workers[1]!.sent.length + workers[2]!.sent.length, 1);
});

test('a request that already failed on every worker goes back to one that failed earlier (a restarted worker), not to an error', async () => {
  const twin = await run(setup(2).model);
  const { workers, model, metrics } = setup(2);
  // w0 fails, w1 takes over and fails too: w0 (in rotation again) is the one left.
  workers[0]!.faults.push({ after: 3, err: reset });
  workers[1]!.faults.push({ after: 4, err: reset });
  const r = await run(model);
  assert.deepEqual(r.ids, twin.ids);
  assert.equal(workers[0]!.sent.length, 2, 'the first try and the second continuation');
  assert.equal(workers[0]!.sent[1]!.inputIds.length, PROMPT.length + 7);
  assert.match(metrics.registry.render(), /migration_type="ongoing_request",reason="strike"\} 2/);
  assert.match(metrics.registry.render(), /model_migration_exhausted_total\{model="m"\} 0/);
});

test('n = 2: a choice Portico already ended (a stop token the engine went past) is not continued after a failure', async () => {
  const whole = await run(setup().model, { n: 2 });
  // A token of choice 0's that choice 1 never makes: choice 0 stops there, choice 1 goes on.
  const stop = whole.ids[0]!.slice(1, 4).find((id) => !whole.ids[1]!.includes(id))!;
  assert.ok(stop !== undefined);
  const twin = await run(setup().model, { n: 2, stopTokenIds: [stop] });
  assert.ok(twin.ids[0]!.length < 5 && twin.ids[1]!.length === 16);
  const { workers, model } = setup();
  workers[0]!.faults.push({ after: 6, err: reset });
  const r = await run(model, { n: 2, stopTokenIds: [stop] });
  assert.deepEqual(r.ids, twin.ids);
  const conts = [...workers[1]!.sent, ...workers[2]!.sent];
  assert.equal(conts.length, 1, 'only the unfinished choice goes on');
  assert.equal(conts[0]!.inputIds.length, PROMPT.length + 6);
});
