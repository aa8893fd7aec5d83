// Request migration when a worker leaves, end to end (deterministic mock engines as child
// processes, test/helpers/migration.ts): a worker shutting down gracefully (SIGTERM: its grace,
// then UNAVAILABLE, which Portico's clients of both protocols read as a strike), a worker removed with DELETE /admin/workers/:id, a worker whose etcd lease
// ends, and a SIGKILL under the KServe gRPC face and under a custom chat processor's routed
// engine. In each, streams run on one worker A; once every stream is under way a second worker
// B joins and A leaves; every stream must then equal its uninterrupted twin, with no client error.

import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';

import { ROOT, type Proc } from './helpers/portico.js';
import { startEtcd, type EtcdServer } from './helpers/etcd.js';
import { grpcPortOf, kserveClient, inferRequest, text, int32, bool, outputText, finalFlag, RequestStream } from './helpers/kserve.js';
import { processorReady } from './helpers/processor-ready.js';
import {
  addWorker, chatReq, exited, healthyWorkers, killEngine, migrationCounts, printed, removeWorker, send, startEngine, startFrontend, workers,
  type Engine, type Outcome, type Req,
} from './helpers/migration.js';

/** Long enough (400 tokens at STEP_MS) to be under way when its worker leaves. */
const long = (i: number, stream = true): Req => chatReq(`leaving ${i}: tell me a long story`, { stream, maxTokens: 400, ignoreEos: true });
const STREAMS = 4;

/** Events every stream must have had before its worker leaves. */
const UNDER_WAY = 10;

/**
 * Run `reqs` (streamed) on the frontend; once each has UNDER_WAY events, `act` (a worker
 * leaves); the outcomes.
 */
async function whileUnderWay(s: Proc, reqs: Req[], act: () => Promise<void>): Promise<Outcome[]> {
  const seen = reqs.map(() => 0);
  let ready!: () => void;
  const going = new Promise<void>((r) => (ready = r));
  const runs = reqs.map((r, i) =>
    send(s.url, r, () => {
      if (++seen[i]! === UNDER_WAY && seen.every((n) => n >= UNDER_WAY)) ready();
    }),
  );
  // A stream that ended early (a failure) releases the wait too; the comparison reports it.
  void Promise.all(runs).then(() => ready());
  await going;
  await act();
  return Promise.all(runs);
}

function assertTwins(runs: Outcome[], twins: Outcome[], what: string): void {
  for (const [i, r] of runs.entries()) {
    assert.equal(twins[i]!.status, 200, `twin ${i}: ${twins[i]!.error}`);
    assert.deepEqual(r, twins[i], `${what}: stream ${i} equals its twin`);
  }
}

/** A SIGKILL moved a request mid-generation: the connection lost, or the stream reset first (a strike). */
function assertKilledMidStream(c: Awaited<ReturnType<typeof migrationCounts>>): void {
  const n = (c.moved['ongoing_request/disconnected'] ?? 0) + (c.moved['ongoing_request/strike'] ?? 0);
  assert.ok(n >= 1, `a request moved mid-generation: ${JSON.stringify(c.moved)}`);
}

/** The processes a test started, stopped when it ends (frontends first). */
const owned: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of owned.splice(0).reverse()) await c().catch(() => undefined);
});
const engine = async (...a: Parameters<typeof startEngine>): Promise<Engine> => {
  const e = await startEngine(...a);
  owned.push(() => killEngine(e));
  return e;
};
const frontend = async (...a: Parameters<typeof startFrontend>): Promise<Proc> => {
  const s = await startFrontend(...a);
  owned.push(() => s.stop());
  return s;
};

for (const protocol of ['sglang', 'vllm'] as const) test(`${protocol}: SIGTERM: a draining worker refuses new requests and ends the rest after its grace; all of them move, no client error`, async () => {
  const a = await engine(protocol, ['--shutdown-grace-secs', '0.5']);
  const b = await engine(protocol);
  const s = await frontend([a.url]);
  await healthyWorkers(s, 1);
  const reqs = Array.from({ length: STREAMS }, (_, i) => long(i));
  const late = long(99, false);
  const twins = await Promise.all([...reqs, late].map((r) => send(s.url, r)));
  const lateTwin = twins.pop()!;

  let lateRun: Promise<Outcome> | null = null;
  const runs = await whileUnderWay(s, reqs, async () => {
    await addWorker(s, b.url);
    await healthyWorkers(s, 2);
    a.proc.child.kill('SIGTERM');
    await printed(a.proc, /draining: \d+ requests in flight/, 'A drains');
    // A request arriving while A drains: refused there (UNAVAILABLE), served by B.
    lateRun = send(s.url, late);
    await exited(a.proc);
  });
  assertTwins(runs, twins, 'SIGTERM');
  assert.deepEqual(await lateRun!, lateTwin, 'a request sent during the drain');
  const ended = Number((await printed(a.proc, /drained: (\d+) requests ended with UNAVAILABLE/, 'A drained'))[1]);
  assert.ok(ended >= 1, `some requests outlived the grace (${ended})`);
  const c = await migrationCounts(s);
  assert.ok((c.moved['ongoing_request/strike'] ?? 0) >= ended, `the ones ended with UNAVAILABLE moved: ${JSON.stringify(c.moved)}`);
  assert.equal(c.exhausted, 0);
});

test('DELETE /admin/workers/:id mid-stream: the removed worker\'s requests move at once', async () => {
  const a = await engine('vllm');
  const b = await engine('vllm');
  const s = await frontend([a.url]);
  await healthyWorkers(s, 1);
  const reqs = Array.from({ length: STREAMS }, (_, i) => long(i));
  const twins = await Promise.all(reqs.map((r) => send(s.url, r)));
  const runs = await whileUnderWay(s, reqs, async () => {
    await addWorker(s, b.url);
    await healthyWorkers(s, 2);
    const id = (await workers(s)).find((w) => w.url === a.url)!.id;
    await removeWorker(s, id);
  });
  assertTwins(runs, twins, 'DELETE');
  const c = await migrationCounts(s);
  assert.ok((c.moved['ongoing_request/worker_removed'] ?? 0) >= 1, JSON.stringify(c.moved));
  assert.equal(c.total, c.moved['ongoing_request/worker_removed'], `nothing but the removal moved them: ${JSON.stringify(c.moved)}`);
  // A lives on; it only lost the requests that moved.
  assert.equal(a.proc.child.exitCode, null);
});

let etcd: EtcdServer | null = null;
before(async () => {
  etcd = await startEtcd();
});
after(async () => {
  await etcd?.destroy();
});

test('an etcd lease that ends moves the worker\'s requests (its drain then finds none left)', async () => {
  const reg = ['--register', etcd!.url, '--model-name', 'm', '--lease-ttl-secs', '30'];
  const s = await frontend([], ['--discovery', etcd!.url]);
  // A's grace outlasts the test's hang guard: only the lease's end can move its requests.
  const a = await engine('sglang', [...reg, '--shutdown-grace-secs', '120']);
  await healthyWorkers(s, 1);
  const reqs = Array.from({ length: STREAMS }, (_, i) => long(i));
  const twins = await Promise.all(reqs.map((r) => send(s.url, r)));
  const runs = await whileUnderWay(s, reqs, async () => {
    await engine('sglang', reg);
    await healthyWorkers(s, 2);
    // SIGTERM revokes A's lease first (then A drains).
    a.proc.child.kill('SIGTERM');
  });
  assertTwins(runs, twins, 'lease end');
  await printed(a.proc, /drained: 0 requests ended with UNAVAILABLE/, 'A had nothing left when its drain looked');
  const c = await migrationCounts(s);
  assert.ok((c.moved['ongoing_request/worker_removed'] ?? 0) >= 1, JSON.stringify(c.moved));
  assert.equal(c.total, c.moved['ongoing_request/worker_removed'], JSON.stringify(c.moved));
});

test('KServe ModelStreamInfer: a worker SIGKILLed mid-stream costs the stream nothing', async () => {
  const a = await engine('vllm');
  const b = await engine('vllm');
  const s = await frontend([a.url], ['--grpc-port', '0']);
  await healthyWorkers(s, 1);
  const client = kserveClient(await grpcPortOf(s));
  const run = async (onResponse?: () => void) => {
    const input = new RequestStream();
    input.push(inferRequest('m', [text('text_input', 'Once upon a time'), int32('max_tokens', 300), bool('ignore_eos', true), bool('stream', true)], { id: 'k' }));
    input.end();
    let textOut = '';
    let finish: string | undefined;
    let usage = '';
    let finals = 0;
    for await (const r of client.modelStreamInfer(input)) {
      assert.equal(r.errorMessage, '');
      const res = r.inferResponse!;
      textOut += outputText(res, 'text_output') ?? '';
      finish = outputText(res, 'finish_reason') ?? finish;
      if (finalFlag(res)) {
        finals++;
        usage = JSON.stringify(['prompt_tokens', 'completion_tokens'].map((k) => String(res.parameters[k]?.parameterChoice.value)));
      }
      onResponse?.();
    }
    return { textOut, finish, usage, finals };
  };
  const twin = await run();
  assert.equal(twin.finish, 'length');
  let seen = 0;
  let ready!: () => void;
  const going = new Promise<void>((r) => (ready = r));
  const moved = run(() => ++seen === UNDER_WAY && ready());
  await going;
  await addWorker(s, b.url);
  await healthyWorkers(s, 2);
  await killEngine(a);
  assert.deepEqual(await moved, twin);
  assertKilledMidStream(await migrationCounts(s));
});

test('a custom chat processor\'s routed engine: a worker SIGKILLed mid-generation costs the stream nothing', async () => {
  // The processor passes max_tokens only (no ignore_eos): slow steps keep its one script (40
  // events) under way for seconds after the first UNDER_WAY.
  const a = await engine('sglang', ['--step-ms', '100']);
  const b = await engine('sglang', ['--step-ms', '100']);
  const s = await frontend([a.url], ['--chat-processor', `${ROOT}test/fixtures/processors/rules.mjs:provider`]);
  await healthyWorkers(s, 1);
  await processorReady(s.url, 'm');
  const req: Req = { path: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: 'through the processor' }], stream: true, max_tokens: 300 } };
  const twin = await send(s.url, req);
  assert.equal(twin.status, 200, twin.error);
  assert.equal(twin.error, undefined);
  assert.ok(twin.choices[0]!.content.includes('</think>'), twin.choices[0]!.content);
  const [run] = await whileUnderWay(s, [req], async () => {
    await addWorker(s, b.url);
    await healthyWorkers(s, 2);
    await killEngine(a);
  });
  assert.deepEqual(run, twin);
  assertKilledMidStream(await migrationCounts(s));
});
