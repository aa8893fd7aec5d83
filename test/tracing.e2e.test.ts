// Distributed traces: a real Portico process exports its spans over OTLP to a receiver in
// another process (helpers/otlp-receiver.ts, on the official OpenTelemetry protos), gRPC and
// HTTP/protobuf; an in-process mock engine records the trace context each Generate carried.
// The span tree (server span, phases, engine call), the attributes (model, request ids,
// worker, KV overlap, tokens, finish reason; no prompt text), the propagation of a client's
// traceparent/tracestate to the engine, sampling, malformed headers, and a collector that
// is down (requests succeed; the bounded queue's drops and the failed exports are counted);
// the legs of a disaggregated pair, a migration after a worker is killed, the vLLM protocol and
// the KServe gRPC face.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import type { ReceivedRequest } from '../src/mock/received.js';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.js';
import { eventually } from './helpers/eventually.js';
import { freePort } from './helpers/free-port.js';
import { seriesOf } from './helpers/metrics-text.js';
import { grpcPortOf, inferRequest, kserveClient, param, text } from './helpers/kserve.js';
import { killEngine, startEngine, startFrontend } from './helpers/migration.js';

const PROMPT = 'a distinctive prompt about zebras';
const PHASES = ['receive', 'validate', 'tokenize', 'route', 'engine.generate', 'response'];
/** Spans go out in small batches soon after they end: the tests wait for them, not for a timer. */
const FAST_EXPORT = { OTEL_BSP_SCHEDULE_DELAY: '20' };

let engine: MockEngine;
let receiver: OtlpReceiver;
const procs: Proc[] = [];

async function serve(extra: string[], env: NodeJS.ProcessEnv = FAST_EXPORT): Promise<Proc> {
  const p = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', engine.url, ...extra], env);
  procs.push(p);
  return p;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

async function chat(server: Proc, headers: Record<string, string>, opts: { stream?: boolean; path?: string } = {}): Promise<{ status: number; requestId: string; text: string }> {
  const requestId = `trace-test-${hex(6)}`;
  const path = opts.path ?? '/v1/chat/completions';
  const body = path === '/v1/completions'
    ? { model: 'm', prompt: PROMPT, max_tokens: 4, stream: opts.stream ?? false }
    : { model: 'm', messages: [{ role: 'user', content: PROMPT }], max_tokens: 4, stream: opts.stream ?? false };
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, requestId, text: await res.text() };
}

/** What the engine received for the request whose client id is `requestId`. */
function received(requestId: string): ReceivedRequest {
  const r = engine.context.received.find(requestId);
  assert.ok(r, `the engine received ${requestId}`);
  return r;
}

const complete = (spans: ReceivedSpan[]) => PHASES.every((n) => spans.some((s) => s.name === n)) && spans.some((s) => s.kind === 2);

/** The trace whose server span has gen_ai.request.id `requestId`, once all its phases arrived. */
async function traceOfRequest(requestId: string): Promise<ReceivedSpan[]> {
  let traceId = '';
  await eventually(async () => {
    const root = (await receiver.spans()).find((s) => s.attributes['gen_ai.request.id'] === requestId && s.kind === 2);
    traceId = root?.traceId ?? '';
    return root !== undefined;
  }, `the server span of ${requestId}`);
  return receiver.trace(traceId, complete, `every phase of ${requestId}`);
}

const one = (spans: ReceivedSpan[], name: string) => {
  const s = spans.filter((x) => x.name === name);
  assert.equal(s.length, 1, `one ${name} span: ${JSON.stringify(spans.map((x) => x.name))}`);
  return s[0]!;
};

before(async () => {
  const info = Model.load(QWEN3).info();
  engine = await startMockEngine({ port: 0, mode: 'echo', protocol: 'sglang', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: 'm' });
  receiver = await startOtlpReceiver();
});

after(async () => {
  for (const p of procs) await p.stop();
  await receiver?.stop();
  await engine?.close();
});

describe('tracing over OTLP/gRPC', () => {
  let server: Proc;
  before(async () => {
    server = await serve(['--otlp-traces-endpoint', receiver.grpcUrl]);
  });

  test("a client's traceparent: the request's spans join its trace, one span per phase, and the engine's parent is the engine span", async () => {
    const traceId = hex(16);
    const clientSpan = hex(8);
    const r = await chat(server, { traceparent: `00-${traceId}-${clientSpan}-01`, tracestate: 'vendor=abc' });
    assert.equal(r.status, 200, r.text);
    const spans = await receiver.trace(traceId, complete, 'the spans of the traced request');
    assert.ok(spans.every((s) => s.via === 'grpc' && s.service === 'portico'), 'exported over gRPC as service portico');
    const root = spans.find((s) => s.kind === 2)!;
    assert.equal(root.parentSpanId, clientSpan, "the server span's parent is the client's span");
    assert.equal(root.name, 'chat m');
    assert.equal(root.traceState, 'vendor=abc');
    assert.equal(root.attributes['gen_ai.request.model'], 'm');
    assert.equal(root.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(root.attributes['gen_ai.request.id'], r.requestId);
    assert.equal(root.attributes['http.route'], '/v1/chat/completions');
    assert.equal(root.attributes['http.response.status_code'], 200);
    assert.equal(root.attributes['gen_ai.usage.output_tokens'], 4);
    assert.deepEqual(root.attributes['gen_ai.response.finish_reasons'], ['length']);
    assert.ok((root.attributes['gen_ai.latency.time_to_first_token'] as number) > 0);
    for (const name of PHASES) assert.equal(one(spans, name).parentSpanId, root.spanId, `${name} is a child of the server span`);
    assert.equal(spans.length, PHASES.length + 1, `no other spans: ${JSON.stringify(spans.map((s) => s.name))}`);
    for (const s of spans) assert.ok(BigInt(s.startNs) <= BigInt(s.endNs) && BigInt(root.startNs) <= BigInt(s.startNs), `${s.name} lies inside the request`);

    const route = one(spans, 'route');
    assert.equal(route.attributes['portico.worker'], engine.url);
    assert.equal(typeof route.attributes['portico.kv.overlap_blocks'], 'number');
    assert.ok((one(spans, 'tokenize').attributes['portico.prompt_tokens'] as number) > 0);

    const call = one(spans, 'engine.generate');
    assert.equal(call.kind, 3, 'the engine call is a client span');
    assert.equal(call.attributes['server.address'], engine.url);
    assert.equal(call.attributes['gen_ai.request.max_tokens'], 4);
    assert.equal(call.attributes['gen_ai.usage.output_tokens'], 4);
    assert.deepEqual(call.attributes['gen_ai.response.finish_reasons'], ['length']);
    const got = received(r.requestId);
    assert.equal(call.attributes['portico.engine_request_id'], got.requestId);
    assert.equal(got.traceparent, `00-${traceId}-${call.spanId}-01`, 'the engine got the engine span as its parent');
    assert.equal(got.tracestate, 'vendor=abc', 'and the client\'s tracestate');

    // No prompt text anywhere in the trace.
    assert.ok(!JSON.stringify(spans).includes('zebras'), 'the prompt is not in any span');
  });

  test('no traceparent: a new trace starts (sample ratio 1), streamed, and the engine is told of it', async () => {
    const r = await chat(server, {}, { stream: true });
    assert.equal(r.status, 200, r.text);
    const spans = await traceOfRequest(r.requestId);
    const root = spans.find((s) => s.kind === 2)!;
    assert.equal(root.parentSpanId, '', 'a root span');
    assert.equal(root.attributes['portico.stream'], true);
    assert.equal(received(r.requestId).traceparent, `00-${root.traceId}-${one(spans, 'engine.generate').spanId}-01`);
  });

  test('completions: the operation is text_completion', async () => {
    const r = await chat(server, {}, { path: '/v1/completions' });
    assert.equal(r.status, 200, r.text);
    const root = (await traceOfRequest(r.requestId)).find((s) => s.kind === 2)!;
    assert.equal(root.name, 'text_completion m');
    assert.equal(root.attributes['gen_ai.operation.name'], 'text_completion');
  });

  for (const bad of [
    'garbage',
    '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331', // no flags
    '00-00000000000000000000000000000000-b7ad6b7169203331-01', // all-zero trace id
    '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01', // all-zero parent id
    'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', // version ff is invalid
    '00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01', // upper-case hex
    '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra', // version 00 has four fields
  ]) {
    test(`a malformed traceparent (${bad}) starts a new trace; the request is served`, async () => {
      const r = await chat(server, { traceparent: bad, tracestate: 'vendor=abc' });
      assert.equal(r.status, 200, r.text);
      const spans = await traceOfRequest(r.requestId);
      const root = spans.find((s) => s.kind === 2)!;
      assert.equal(root.parentSpanId, '');
      assert.notEqual(root.traceId, '0af7651916cd43dd8448eb211c80319c');
      assert.equal(root.traceState, '', 'a tracestate without a valid traceparent is dropped');
      assert.equal(received(r.requestId).traceparent?.split('-')[1], root.traceId);
    });
  }
});

describe('tracing over OTLP HTTP/protobuf', () => {
  test('the spans arrive at /v1/traces', async () => {
    const server = await serve(['--otlp-traces-endpoint', receiver.httpUrl.replace('/v1/traces', ''), '--otlp-traces-protocol', 'http/protobuf']);
    const traceId = hex(16);
    const r = await chat(server, { traceparent: `00-${traceId}-${hex(8)}-01` });
    assert.equal(r.status, 200, r.text);
    const spans = await receiver.trace(traceId, complete, 'the spans over HTTP');
    assert.ok(spans.every((s) => s.via === 'http'));
  });

  test('OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME configure it without flags', async () => {
    const server = await serve([], { ...FAST_EXPORT, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.httpUrl.replace('/v1/traces', ''), OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_SERVICE_NAME: 'frontend-a' });
    const traceId = hex(16);
    const r = await chat(server, { traceparent: `00-${traceId}-${hex(8)}-01` });
    assert.equal(r.status, 200, r.text);
    const spans = await receiver.trace(traceId, complete, 'the spans of the env-configured server');
    assert.ok(spans.every((s) => s.via === 'http' && s.service === 'frontend-a'));
  });
});

describe('migration', () => {
  test('a worker killed mid-stream: the request moves, and its engine span records the move', async () => {
    const engines = [await startEngine('sglang'), await startEngine('sglang')];
    try {
      const server = await startFrontend(engines.map((e) => e.url), ['--otlp-traces-endpoint', receiver.grpcUrl], FAST_EXPORT);
      procs.push(server);
      const traceId = hex(16);
      const res = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${hex(8)}-01` },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: PROMPT }], max_tokens: 300, ignore_eos: true, stream: true }),
      });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      const first = await reader.read();
      assert.ok(!first.done, 'the stream started');
      // The worker serving it (the frontend's own gauge), killed with the stream open.
      let serving = -1;
      await eventually(async () => {
        const m = await fetch(`${server.url}/metrics`).then((x) => x.text());
        serving = [0, 1].find((i) => new RegExp(`worker_active_requests\\{model="m",worker="${i}"\\} 1`).test(m)) ?? -1;
        return serving >= 0;
      }, 'the serving worker');
      await killEngine(engines[serving]!);
      let text = new TextDecoder().decode(first.value);
      for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
      assert.match(text, /\[DONE\]/, 'the stream ended normally');
      assert.doesNotMatch(text, /"error"/);
      const spans = await receiver.trace(traceId, complete, 'the spans of the migrated request');
      const call = one(spans, 'engine.generate');
      assert.equal(call.attributes['portico.migrations'], 1);
      assert.deepEqual(call.events.map((e) => [e.name, e.attributes['portico.worker']]), [['migration', engines[1 - serving]!.url]]);
      assert.equal(call.attributes['gen_ai.usage.output_tokens'], 300);
    } finally {
      for (const e of engines) await killEngine(e);
    }
  });
});

describe('the KServe v2 gRPC face', () => {
  test("ModelInfer: the call's traceparent metadata is followed, the phases are spans, the engine gets the engine span", async () => {
    const server = await serve(['--otlp-traces-endpoint', receiver.grpcUrl, '--grpc-port', '0']);
    const port = await grpcPortOf(server);
    const traceId = hex(16);
    const clientSpan = hex(8);
    const id = `kserve-trace-${hex(4)}`;
    const res = await kserveClient(port).modelInfer(inferRequest('m', [text('text_input', PROMPT)], { id, parameters: { max_tokens: param.int(3) } }), { headers: { traceparent: `00-${traceId}-${clientSpan}-01` } });
    assert.ok(res.outputs.length > 0);
    const spans = await receiver.trace(traceId, complete, 'the spans of the ModelInfer call');
    const root = spans.find((s) => s.kind === 2)!;
    assert.equal(root.parentSpanId, clientSpan);
    assert.equal(root.name, 'text_completion m');
    assert.equal(root.attributes['http.route'], '/inference.GRPCInferenceService/ModelInfer');
    assert.equal(root.attributes['gen_ai.request.id'], id);
    assert.equal(root.attributes['http.response.status_code'], 200);
    const call = one(spans, 'engine.generate');
    const got = engine.context.received.find(String(call.attributes['portico.engine_request_id']));
    assert.equal(got?.traceparent, `00-${traceId}-${call.spanId}-01`);
    assert.ok(!JSON.stringify(spans).includes('zebras'), 'the prompt is not in any span');
  });
});

describe('the vLLM engine protocol', () => {
  let vllm: MockEngine | undefined;
  after(async () => {
    await vllm?.close();
  });

  test("the Generate call carries the engine span's context as on SGLang's protocol", async () => {
    const info = Model.load(QWEN3).info();
    vllm = await startMockEngine({ port: 0, mode: 'echo', protocol: 'vllm', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: 'm' });
    const server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', vllm.url, '--otlp-traces-endpoint', receiver.grpcUrl], FAST_EXPORT);
    procs.push(server);
    const traceId = hex(16);
    const r = await chat(server, { traceparent: `00-${traceId}-${hex(8)}-01`, tracestate: 'k=v' });
    assert.equal(r.status, 200, r.text);
    const spans = await receiver.trace(traceId, complete, 'the spans of the request on vLLM');
    const got = vllm.context.received.find(r.requestId);
    assert.equal(got?.protocol, 'vllm');
    assert.equal(got?.traceparent, `00-${traceId}-${one(spans, 'engine.generate').spanId}-01`);
    assert.equal(got?.tracestate, 'k=v');
  });
});

describe('disaggregated prefill and decode', () => {
  const pair: MockEngine[] = [];
  after(async () => {
    await Promise.all(pair.map((e) => e.close()));
  });

  test('both legs carry the engine span as their parent; the route names the prefill worker', async () => {
    const info = Model.load(QWEN3).info();
    const base = { port: 0, mode: 'sim' as const, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, eosProbability: 0, servedModelName: 'm' };
    const prefill = await startMockEngine({ ...base, role: 'prefill' });
    pair.push(prefill);
    const decode = await startMockEngine({ ...base, role: 'decode' });
    pair.push(decode);
    const server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--prefill-worker', prefill.url, '--decode-worker', decode.url, '--otlp-traces-endpoint', receiver.grpcUrl], FAST_EXPORT);
    procs.push(server);
    const traceId = hex(16);
    const r = await chat(server, { traceparent: `00-${traceId}-${hex(8)}-01` });
    assert.equal(r.status, 200, r.text);
    const spans = await receiver.trace(traceId, complete, 'the spans of the disaggregated request');
    assert.equal(one(spans, 'route').attributes['portico.prefill.worker'], prefill.url);
    assert.equal(one(spans, 'route').attributes['portico.worker'], decode.url);
    const call = one(spans, 'engine.generate');
    assert.equal(call.attributes['portico.prefill.worker'], prefill.url);
    const expected = `00-${traceId}-${call.spanId}-01`;
    assert.equal(prefill.context.received.find(r.requestId)?.traceparent, expected, 'the prefill leg');
    assert.equal(decode.context.received.find(r.requestId)?.traceparent, expected, 'the decode leg');
  });
});

describe('sampling', () => {
  let server: Proc;
  before(async () => {
    server = await serve(['--otlp-traces-endpoint', receiver.grpcUrl, '--trace-sample-ratio', '0']);
  });

  test("ratio 0: no spans for new or unsampled traces, but the engine still gets the context; a client's sampled flag is followed", async () => {
    const unsampledTrace = hex(16);
    const a = await chat(server, { traceparent: `00-${unsampledTrace}-${hex(8)}-00` });
    const b = await chat(server, {});
    assert.equal(a.status, 200, a.text);
    assert.equal(b.status, 200, b.text);
    const ta = received(a.requestId).traceparent;
    assert.match(ta ?? '', new RegExp(`^00-${unsampledTrace}-[0-9a-f]{16}-00$`), 'the unsampled client trace goes on to the engine, unsampled');
    assert.match(received(b.requestId).traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/, 'a new, unsampled trace');
    // A sampled request after them: once its spans are in, any of the earlier ones would be too (one queue, in order).
    const sampledTrace = hex(16);
    const c = await chat(server, { traceparent: `00-${sampledTrace}-${hex(8)}-01` });
    assert.equal(c.status, 200, c.text);
    await receiver.trace(sampledTrace, complete, 'the sampled request');
    const all = await receiver.spans();
    assert.ok(!all.some((s) => s.traceId === unsampledTrace || s.attributes['gen_ai.request.id'] === a.requestId || s.attributes['gen_ai.request.id'] === b.requestId), 'no span of the unsampled requests');
  });
});

describe('tracing off', () => {
  test("no endpoint: nothing is exported and the engine gets no trace context, even when the client sends one", async () => {
    const server = await serve([], {});
    const traceId = hex(16);
    const r = await chat(server, { traceparent: `00-${traceId}-${hex(8)}-01` });
    assert.equal(r.status, 200, r.text);
    assert.equal(received(r.requestId).traceparent, undefined);
    assert.equal(received(r.requestId).tracestate, undefined);
  });
});

const spanCount = async (server: Proc, outcome: string) => seriesOf(await (await fetch(`${server.url}/metrics`)).text()).get(`portico_frontend_trace_spans_total{outcome="${outcome}"}`) ?? 0;

/** Five traced requests, each answered; the engine got each one's context. */
async function fiveRequests(server: Proc): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const r = await chat(server, { traceparent: `00-${hex(16)}-${hex(8)}-01` });
    assert.equal(r.status, 200, r.text);
    assert.match(received(r.requestId).traceparent ?? '', /^00-/);
  }
}

describe('a collector that is down or stuck', () => {
  test('nothing listens: requests succeed; the failed exports are counted and logged', async () => {
    const port = await freePort();
    const server = await serve(['--otlp-traces-endpoint', `http://127.0.0.1:${port}`]);
    await fiveRequests(server);
    await eventually(async () => (await spanCount(server, 'failed')) > 0, 'failed exports counted');
    assert.equal(await spanCount(server, 'exported'), 0);
    await eventually(() => /trace export failed/.test(server.output()), 'the outage is logged');
  });

  test('it takes connections and never answers: requests succeed; past the bounded queue spans are dropped and counted', async () => {
    const sockets: Socket[] = [];
    const hole = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
    try {
      const port = (hole.address() as AddressInfo).port;
      // One export in flight (stuck for the whole test) and a queue of 4: the rest is dropped.
      const server = await serve(['--otlp-traces-endpoint', `http://127.0.0.1:${port}`], { OTEL_BSP_MAX_QUEUE_SIZE: '4', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4', OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_BSP_EXPORT_TIMEOUT: '600000' });
      await fiveRequests(server);
      await eventually(async () => (await spanCount(server, 'dropped')) > 0, 'dropped spans counted');
      assert.equal(await spanCount(server, 'exported'), 0);
      await server.stop();
    } finally {
      for (const s of sockets) s.destroy();
      hole.close();
    }
  });
});
