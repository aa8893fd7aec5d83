// What a traced request's spans cost the request thread, in-process and without export: a
// request's trace started from its headers, its phases marked, a GenerationTrace over a fixed
// dispatch fed a finish and an end event, the trace ended; spans go to a no-op processor, so
// this is the making of the spans (the OTLP encoding and transport come on top; the end-to-end
// figure is tracing-cpu.bench.ts). Run each ratio in its own process, alternating:
//
//   npm run build:ts && for r in 0 1 0 1; do node dist/bench/tracing-spans.bench.js $r; done
//
// 0: the unsampled path (context extracted, a non-recording span, the engine's traceparent made).

import { NoopSpanProcessor } from '@opentelemetry/sdk-trace';
import { RequestTracer } from '../src/tracing/tracer.js';
import { GenerationTrace } from '../src/pipeline/generation-trace.js';
import type { GenerationRequest } from '../src/pipeline/request.js';
import type { Dispatch } from '../src/router/types.js';
import type { ParsedEvent } from '../src/pipeline/outputs.js';

const ratio = Number(process.argv[2] ?? 1);
const tracer = new RequestTracer({ endpoint: 'http://127.0.0.1:4317', protocol: 'grpc', sampleRatio: ratio, serviceName: 'portico', maxQueueSize: 2048, maxExportBatchSize: 512, scheduleDelayMs: 5000, exportTimeoutMs: 1000 }, undefined, new NoopSpanProcessor());
const d = { worker: { id: 0, client: { url: 'grpc://a:1' } }, overlapBlocks: 0, queuedMs: 0 } as unknown as Dispatch;
const usage = { promptTokens: 20, completionTokens: 1, cachedTokens: 0 };
const finish: ParsedEvent = { kind: 'finish', index: 0, reason: 'length', completionTokens: 1, matchedStop: null, usage, tokenIds: null };
const end: ParsedEvent = { kind: 'end', usage };
const sink = { event: () => undefined };
const noHeader = () => '';

function one(): void {
  const t0 = performance.now();
  const tr = tracer.start(noHeader, 'POST', '/v1/chat/completions', 'request-id', t0);
  tr.describe('m', false);
  tr.validated(t0);
  tr.tokenized(20);
  const req = { model: { name: 'm' }, promptIds: new Uint32Array(20), engine: { requestId: 'engine-id', inputIds: new Uint32Array(20), n: 1, maxNewTokens: 1 } } as unknown as GenerationRequest;
  const g = new GenerationTrace(tr, req, d, t0, performance.now(), sink);
  g.event(finish);
  g.event(end);
  g.settled();
  tr.end(200, false);
}

for (let i = 0; i < 20_000; i++) one();
const N = 100_000;
const c = process.cpuUsage();
for (let i = 0; i < N; i++) one();
const u = process.cpuUsage(c);
console.log(`sample ratio ${ratio}: ${((u.user + u.system) / N).toFixed(2)} µs CPU per request (spans made, not exported)`);
