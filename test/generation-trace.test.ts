// What runGeneration's trace records, on spans read back from an in-memory exporter: the
// route (worker, KV overlap, queue, the prefill worker of a disaggregated pair), the engine
// span's context in the engine parameters, a migration as an event, the end's usage and
// finish reasons, and how a failed, a stopped and an unsampled generation end.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { RequestTracer } from '../src/tracing/tracer.js';
import { GenerationTrace } from '../src/pipeline/generation-trace.js';
import type { GenerationRequest } from '../src/pipeline/request.js';
import type { ParsedEvent } from '../src/pipeline/outputs.js';
import type { Dispatch } from '../src/router/types.js';
import { ApiError } from '../src/protocol/errors.js';
import type { TracingSettings } from '../src/tracing/settings.js';

const SETTINGS: TracingSettings = { endpoint: 'http://127.0.0.1:24999', protocol: 'grpc', sampleRatio: 1, serviceName: 'portico', maxQueueSize: 10, maxExportBatchSize: 10, scheduleDelayMs: 10, exportTimeoutMs: 10 };

function setup(sampleRatio = 1, traceparent = '') {
  const exporter = new InMemorySpanExporter();
  const tracer = new RequestTracer({ ...SETTINGS, sampleRatio }, undefined, new SimpleSpanProcessor({ exporter }));
  const headers: Record<string, string> = { traceparent };
  const trace = tracer.start((h) => headers[h] ?? '', 'POST', '/v1/chat/completions', 'client-id', performance.now());
  const req = { model: { name: 'm' }, promptIds: new Uint32Array(5), engine: { requestId: 'engine-id', inputIds: new Uint32Array(5), n: 1, maxNewTokens: 8, temperature: 0.5 } } as unknown as GenerationRequest;
  const seen: ParsedEvent[] = [];
  const sink = { event: (ev: ParsedEvent) => void seen.push(ev) };
  return { exporter, trace, req, seen, sink, spans: () => exporter.getFinishedSpans() };
}

const worker = (id: number, url: string) => ({ id, client: { url } });
const dispatch = (extra: Partial<Dispatch> = {}) => ({ worker: worker(0, 'grpc://decode:1'), overlapBlocks: 3, queuedMs: 0, ...extra }) as unknown as Dispatch;
const usage = { promptTokens: 5, completionTokens: 2, cachedTokens: 1 };
const finish: ParsedEvent = { kind: 'finish', index: 0, reason: 'stop', completionTokens: 2, matchedStop: null, usage, tokenIds: null };
const end: ParsedEvent = { kind: 'end', usage };
const named = (spans: ReadableSpan[], name: string) => {
  const s = spans.find((x) => x.name === name);
  assert.ok(s, `a ${name} span among ${spans.map((x) => x.name).join(', ')}`);
  return s;
};

test('a disaggregated, queued request that migrated: route, queue and engine spans; the engine gets the engine span as parent', () => {
  const t = setup();
  const d = dispatch({ queuedMs: 4, dpRank: 1, prefill: { worker: worker(7, 'grpc://prefill:1'), dpRank: 0 } as unknown as Dispatch });
  const start = performance.now() - 5;
  const g = new GenerationTrace(t.trace, t.req, d, start, performance.now(), t.sink);
  g.moved(dispatch({ worker: worker(2, 'grpc://other:1') } as Partial<Dispatch>));
  assert.equal(g.event(finish), undefined);
  g.event(end);
  t.trace.end(200, false);
  assert.deepEqual(t.seen, [finish, end], 'the events reach the sink it wraps, in order');

  const spans = t.spans();
  const route = named(spans, 'route');
  assert.equal(route.attributes['portico.worker'], 'grpc://decode:1');
  assert.equal(route.attributes['portico.kv.overlap_blocks'], 3);
  assert.equal(route.attributes['portico.dp_rank'], 1);
  assert.equal(route.attributes['portico.prefill.worker'], 'grpc://prefill:1');
  assert.equal(route.attributes['portico.prefill.dp_rank'], 0);
  assert.equal(route.attributes['gen_ai.latency.time_in_queue'], 0.004);
  named(spans, 'queue');
  const engine = named(spans, 'engine.generate');
  assert.equal(engine.attributes['portico.prefill.worker'], 'grpc://prefill:1');
  assert.equal(engine.attributes['portico.migrations'], 1);
  assert.deepEqual(engine.events.map((e) => [e.name, e.attributes?.['portico.worker']]), [['migration', 'grpc://other:1']]);
  assert.deepEqual(engine.attributes['gen_ai.response.finish_reasons'], ['stop']);
  assert.equal(engine.attributes['gen_ai.usage.output_tokens'], 2);
  assert.equal(engine.attributes['gen_ai.usage.cache_read.input_tokens'], 1);
  assert.equal(engine.attributes['gen_ai.request.temperature'], 0.5);
  const c = engine.spanContext();
  assert.deepEqual(t.req.engine.traceHeaders, ['traceparent', `00-${c.traceId}-${c.spanId}-01`]);
  named(spans, 'response');
  const root = spans.find((s) => s.parentSpanContext === undefined)!;
  assert.equal(root.attributes['gen_ai.usage.output_tokens'], 2);
  for (const s of spans) assert.equal(s.spanContext().traceId, root.spanContext().traceId);
});

test('a failed generation: the engine span ends with the error; a second ending changes nothing', () => {
  const t = setup();
  const g = new GenerationTrace(t.trace, t.req, dispatch(), performance.now(), performance.now(), t.sink);
  g.failed(new ApiError(502, 'the worker failed', { code: 'engine_error' }));
  g.settled();
  t.trace.end(502, false);
  const engine = named(t.spans(), 'engine.generate');
  assert.equal(engine.status.code, 2);
  assert.equal(engine.attributes['error.type'], 'engine_error');
  assert.equal(engine.attributes['portico.cancelled'], undefined);
  const root = t.spans().find((s) => s.parentSpanContext === undefined)!;
  assert.equal(root.status.code, 2, 'a 5xx is an error on the server span');
  assert.equal(root.attributes['error.type'], '502');
  assert.equal(t.spans().filter((s) => s.name === 'engine.generate').length, 1);
});

test('a generation stopped before its end (the client left): the engine span says so; no response phase', () => {
  const t = setup();
  const g = new GenerationTrace(t.trace, t.req, dispatch(), performance.now(), performance.now(), t.sink);
  g.settled();
  t.trace.end(499, true);
  assert.equal(named(t.spans(), 'engine.generate').attributes['portico.cancelled'], true);
  assert.ok(!t.spans().some((s) => s.name === 'response'));
  const root = t.spans().find((s) => s.parentSpanContext === undefined)!;
  assert.equal(root.attributes['portico.cancelled'], true);
  assert.equal(root.status.code, 0, 'a client that left is not a server error');
});

test('an unsampled request makes no span, and the engine still gets the (unsampled) context of its trace', () => {
  const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
  const t = setup(1, parent);
  assert.equal(t.trace.recording, false);
  const g = new GenerationTrace(t.trace, t.req, dispatch(), performance.now(), performance.now(), t.sink);
  g.moved(dispatch());
  g.event(finish);
  g.event(end);
  t.trace.validated(performance.now());
  t.trace.tokenized(5);
  t.trace.end(200, false);
  assert.deepEqual(t.spans(), []);
  assert.equal(t.seen.length, 2);
  const [name, value] = t.req.engine.traceHeaders!;
  assert.equal(name, 'traceparent');
  assert.match(value!, /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/);
});

test('ratio 0 without a parent: not recorded; the same request with a sampled parent is', () => {
  assert.equal(setup(0).trace.recording, false);
  assert.equal(setup(0, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01').trace.recording, true);
});
