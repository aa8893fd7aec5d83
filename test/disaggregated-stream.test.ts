// The two legs of a disaggregated request as one engine stream: what each protocol puts on
// each leg, the order they run in, and how a failure of either side ends both.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openEngineStream } from '../src/pipeline/disaggregated-stream.js';
import { pushed } from '../src/pipeline/pushed.js';
import { ApiError } from '../src/protocol/errors.js';
import { EngineError } from '../src/engine/errors.js';
import type { Cancellation, EngineClient, EngineDisaggregation, EngineEvent, GenerateParams } from '../src/engine/types.js';
import type { Dispatch } from '../src/router/types.js';
import type { Worker } from '../src/router/worker-pool.js';
import type { WorkerHealthSignal } from '../src/engine/errors.js';
import type { ServedModel } from '../src/pipeline/served-model.js';

/** A leg the test drives: the params it was opened with, and a queue of what it yields. */
class Leg {
  params: GenerateParams | null = null;
  returned = false;
  private queue: Array<EngineEvent | Error | 'end'> = [];
  private wake: (() => void) | null = null;
  opened!: Promise<void>;
  private open!: () => void;

  constructor() {
    this.opened = new Promise((res) => (this.open = res));
  }

  push(x: EngineEvent | Error | 'end'): void {
    this.queue.push(x);
    this.wake?.();
  }

  stream(p: GenerateParams): AsyncIterable<EngineEvent> {
    this.params = p;
    this.open();
    const leg = this;
    return {
      [Symbol.asyncIterator]: () => ({
        async next(): Promise<IteratorResult<EngineEvent>> {
          while (leg.queue.length === 0) {
            if (leg.returned) return { value: undefined, done: true };
            await new Promise<void>((res) => (leg.wake = res));
          }
          const x = leg.queue.shift()!;
          if (x === 'end') return { value: undefined, done: true };
          if (x instanceof Error) throw x;
          return { value: x, done: false };
        },
        async return(): Promise<IteratorResult<EngineEvent>> {
          leg.returned = true;
          leg.wake?.();
          return { value: undefined, done: true };
        },
      }),
    };
  }
}

function worker(id: number, url: string, leg: Leg, engine: EngineDisaggregation | null = null): Worker {
  const client = { url, generate: (p: GenerateParams) => leg.stream(p) } as unknown as EngineClient;
  return { id, client, healthy: true, inflight: 0, role: id === 0 ? 'prefill' : 'decode', configuredRole: 'aggregated', engine, runs: null };
}

function dispatch(w: Worker, dpRank?: number): Dispatch & { ended: number } {
  const d = { worker: w, overlapBlocks: 0, queuedMs: 0, dpRank, ended: 0, firstToken() {}, output() {}, done() { d.ended++; } };
  return d;
}

const never: Cancellation = { aborted: false, addEventListener() {}, removeEventListener() {} };

function model(rendezvousTimeoutMs = 30_000) {
  const failures: Array<[number, WorkerHealthSignal]> = [];
  const m = {
    pd: { bootstrapPort: 8998, rendezvousTimeoutMs },
    pool: { reportFailure: (w: Worker, s: WorkerHealthSignal) => failures.push([w.id, s]), reportSuccess() {} },
  } as unknown as ServedModel;
  return { m, failures };
}

const params = (o: Partial<GenerateParams> = {}): GenerateParams => ({ requestId: 'r1', inputIds: Uint32Array.of(1, 2, 3), maxNewTokens: 8, stream: true, ...o });
const chunk = (ids: number[]): EngineEvent => ({ kind: 'chunk', chunk: { tokenIds: ids, promptTokens: 3, completionTokens: ids.length, cachedTokens: 0, index: 0 } });
const done = (kv?: string): EngineEvent => ({ kind: 'done', done: { finishReason: 'length', promptTokens: 3, completionTokens: 1, cachedTokens: 0, index: 0, outputIds: [9], kvTransferParams: kv } });

/** Reads the stream in push mode: its events, then 'end' or the failure. */
function read(s: AsyncIterable<EngineEvent>): Promise<{ events: EngineEvent[]; error?: unknown }> {
  const events: EngineEvent[] = [];
  return new Promise((resolve) => pushed(s).pipe({ event: (e) => events.push(e), end: () => resolve({ events }), fail: (error) => resolve({ events, error }) }));
}

test('SGLang: both legs at once with one room at the prefill worker\'s bootstrap address; the client reads decode', async () => {
  const [pl, dl] = [new Leg(), new Leg()];
  const p = dispatch(worker(0, 'grpc://10.1.2.3:30000', pl, { role: 'prefill', bootstrapPort: 9001 }), 1);
  const d = dispatch(worker(1, 'grpc://10.1.2.4:30000', dl));
  (d as { prefill?: Dispatch }).prefill = p;
  const { m } = model();
  const out = read(openEngineStream(m, d, params(), never));
  await Promise.all([pl.opened, dl.opened]);
  const b = pl.params!.bootstrap!;
  assert.deepEqual({ host: b.host, port: b.port }, { host: '10.1.2.3', port: 9001 });
  assert.deepEqual(dl.params!.bootstrap, b, 'the decode leg meets the prefill leg in the same room');
  assert.ok(Number.isInteger(b.room) && b.room >= 0 && b.room < 2 ** 31);
  assert.equal(pl.params!.dataParallelRank, 1, 'the prefill leg carries its own rank');
  assert.equal(p.worker.inflight, 1);
  pl.push(done());
  pl.push('end');
  dl.push(chunk([5, 6]));
  dl.push(done());
  dl.push('end');
  const r = await out;
  assert.equal(r.error, undefined);
  assert.deepEqual(r.events.map((e) => e.kind), ['chunk', 'done']);
  assert.equal(p.worker.inflight, 0);
  assert.equal(p.ended, 1);
});

test('SGLang: a prefill worker without a reported port gets --disagg-bootstrap-port; rooms differ per request', async () => {
  const rooms = new Set<number>();
  for (let i = 0; i < 3; i++) {
    const [pl, dl] = [new Leg(), new Leg()];
    const d = dispatch(worker(1, 'grpc://d:1', dl));
    (d as { prefill?: Dispatch }).prefill = dispatch(worker(0, 'grpc://[fd00::1]:1', pl));
    const s = openEngineStream(model().m, d, params(), never);
    const out = read(s);
    await pl.opened;
    assert.equal(pl.params!.bootstrap!.port, 8998);
    assert.equal(pl.params!.bootstrap!.host, '[fd00::1]');
    rooms.add(pl.params!.bootstrap!.room);
    pl.push('end');
    dl.push(done());
    dl.push('end');
    await out;
  }
  assert.equal(rooms.size, 3);
});

test('vLLM (NIXL): prefill first with max_tokens 1, no streaming, do_remote_decode; its returned params go to decode as they are', async () => {
  const [pl, dl] = [new Leg(), new Leg()];
  const d = dispatch(worker(1, 'vllm+grpc://d:1', dl));
  (d as { prefill?: Dispatch }).prefill = dispatch(worker(0, 'vllm+grpc://p:1', pl, { role: 'prefill', kvConnector: 'NixlConnector' }));
  const out = read(openEngineStream(model().m, d, params({ logprobs: true, topLogprobs: 3, minNewTokens: 4 }), never));
  await pl.opened;
  const pp = pl.params!;
  assert.equal(pp.maxNewTokens, 1);
  assert.equal(pp.minNewTokens, undefined);
  assert.equal(pp.stream, false);
  assert.equal(pp.n, 1);
  assert.equal(pp.logprobs, false);
  assert.deepEqual(JSON.parse(pp.kvTransferParams!), { do_remote_decode: true, do_remote_prefill: false });
  assert.equal(dl.params, null, 'decode waits for the prefill leg');
  const handoff = '{"do_remote_prefill":true,"remote_engine_id":"e1","remote_block_ids":[1,2],"remote_host":"p","remote_port":5600}';
  pl.push(done(handoff));
  pl.push('end');
  await dl.opened;
  assert.equal(dl.params!.kvTransferParams, handoff);
  assert.equal(dl.params!.maxNewTokens, 8);
  assert.equal(dl.params!.logprobs, true);
  dl.push(done());
  dl.push('end');
  assert.equal((await out).error, undefined);
});

test('vLLM (Mooncake): the router mints a transfer id and gives decode the prefill engine\'s id and bootstrap address', async () => {
  const [pl, dl] = [new Leg(), new Leg()];
  const d = dispatch(worker(1, 'vllm+grpc://d:1', dl));
  (d as { prefill?: Dispatch }).prefill = dispatch(worker(0, 'vllm+grpc://10.0.0.9:1', pl, { role: 'prefill', kvConnector: 'MooncakeConnector', kvEngineId: 'eng-p', bootstrapPort: 8100 }));
  const out = read(openEngineStream(model().m, d, params(), never));
  await pl.opened;
  const pre = JSON.parse(pl.params!.kvTransferParams!);
  assert.match(pre.transfer_id, /^xfer-/);
  pl.push(done());
  pl.push('end');
  await dl.opened;
  assert.deepEqual(JSON.parse(dl.params!.kvTransferParams!), { do_remote_decode: false, do_remote_prefill: true, transfer_id: pre.transfer_id, remote_engine_id: 'eng-p', remote_bootstrap_addr: 'http://10.0.0.9:8100' });
  dl.push(done());
  dl.push('end');
  await out;
});

test('vLLM with n > 1: no hand-off (the KV is single-use): decode computes the prompt itself', async () => {
  const [pl, dl] = [new Leg(), new Leg()];
  const d = dispatch(worker(1, 'vllm+grpc://d:1', dl));
  (d as { prefill?: Dispatch }).prefill = dispatch(worker(0, 'vllm+grpc://p:1', pl, { role: 'prefill', kvConnector: 'NixlConnector' }));
  const out = read(openEngineStream(model().m, d, params({ n: 2 }), never));
  await pl.opened;
  assert.equal(pl.params!.kvTransferParams, undefined);
  pl.push(done('{"do_remote_prefill":true}'));
  pl.push('end');
  await dl.opened;
  assert.equal(dl.params!.kvTransferParams, undefined);
  assert.equal(dl.params!.n, 2);
  dl.push('end');
  await out;
});

test('a prefill leg that fails before decode produced anything fails the request, aborts decode, and counts against the prefill worker', async () => {
  const [pl, dl] = [new Leg(), new Leg()];
  const p = dispatch(worker(0, 'grpc://p:1', pl));
  const d = dispatch(worker(1, 'grpc://d:1', dl));
  (d as { prefill?: Dispatch }).prefill = p;
  const { m, failures } = model();
  const out = read(openEngineStream(m, d, params(), never));
  await Promise.all([pl.opened, dl.opened]);
  pl.push(new EngineError('unavailable', 'prefill worker gone', 'grpc://p:1', { health: 'disconnected' }));
  const r = await out;
  assert.ok(r.error instanceof ApiError);
  assert.equal((r.error as ApiError).status, 503);
  assert.deepEqual(failures, [[0, 'disconnected']]);
  assert.equal(dl.returned, true, 'the decode leg was aborted');
  assert.equal(p.worker.inflight, 0);
});

test('a decode failure aborts a prefill leg still running', async () => {
  const [pl, dl] = [new Leg(), new Leg()];
  const p = dispatch(worker(0, 'grpc://p:1', pl));
  const d = dispatch(worker(1, 'grpc://d:1', dl));
  (d as { prefill?: Dispatch }).prefill = p;
  const out = read(openEngineStream(model().m, d, params(), never));
  await Promise.all([pl.opened, dl.opened]);
  const err = new EngineError('internal', 'decode broke', 'grpc://d:1', { health: 'strike' });
  dl.push(err);
  const r = await out;
  assert.equal(r.error, err, 'the decode failure reaches the caller as the engine said it (its turn maps it)');
  await new Promise((res) => setImmediate(res));
  assert.equal(pl.returned, true);
  assert.equal(p.worker.inflight, 0);
});

test('the rendezvous is bounded: prefill over, decode silent → both aborted, 503 kv_transfer_timeout', async () => {
  const [pl, dl] = [new Leg(), new Leg()];
  const d = dispatch(worker(1, 'grpc://d:1', dl));
  (d as { prefill?: Dispatch }).prefill = dispatch(worker(0, 'grpc://p:1', pl));
  const out = read(openEngineStream(model(40).m, d, params(), never));
  await pl.opened;
  pl.push(done());
  pl.push('end');
  const r = await out;
  assert.ok(r.error instanceof ApiError);
  assert.equal((r.error as ApiError).status, 503);
  assert.equal((r.error as ApiError).code, 'kv_transfer_timeout');
  assert.equal(dl.returned, true);
});

test('pull mode (the routed engine of custom processors) reads the same events', async () => {
  const [pl, dl] = [new Leg(), new Leg()];
  const d = dispatch(worker(1, 'grpc://d:1', dl));
  (d as { prefill?: Dispatch }).prefill = dispatch(worker(0, 'grpc://p:1', pl));
  const it = openEngineStream(model().m, d, params(), never)[Symbol.asyncIterator]();
  const first = it.next();
  await dl.opened;
  dl.push(chunk([4]));
  assert.deepEqual((await first).value, chunk([4]));
  pl.push('end');
  dl.push(done());
  dl.push('end');
  assert.equal((await it.next()).value?.kind, 'done');
  assert.equal((await it.next()).done, true);
});
