// The process's (or shard's) tracer: the OpenTelemetry SDK's provider with a parent-based
// ratio sampler and the bounded OTLP export (export.ts). start() begins a request's trace
// from its W3C traceparent/tracestate headers, if any and well formed (a malformed
// traceparent starts a new trace, as the W3C specification says).

import { ROOT_CONTEXT, SpanKind, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import { millisToHrTime, W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { ATTR, operationOf } from './attributes.js';
import { exportProcessor, NO_OUTCOMES, type SpanOutcomes } from './export.js';
import { RequestTrace } from './request-trace.js';
import type { TracingSettings } from './settings.js';

type HeaderOf = (name: string) => string;

/** The longest a shutdown waits for the last spans to go out. */
const SHUTDOWN_GRACE_MS = 2000;

const GETTER: TextMapGetter<HeaderOf> = {
  get: (header, key) => header(key) || undefined,
  keys: () => ['traceparent', 'tracestate'],
};

export class RequestTracer {
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  private readonly propagator = new W3CTraceContextPropagator();

  constructor(
    readonly settings: TracingSettings,
    outcomes: SpanOutcomes = NO_OUTCOMES,
    /** Where ended spans go; default: the bounded OTLP export of `settings` (tests pass an in-memory one). */
    processor: SpanProcessor = exportProcessor(settings, outcomes),
  ) {
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
      spanProcessors: [processor],
    });
    this.tracer = this.provider.getTracer('portico');
  }

  /** A request's trace, from its headers (`header` answers '' for an absent one). */
  start(header: HeaderOf, method: string, route: string, requestId: string, startedAt: number): RequestTrace {
    const parent = this.propagator.extract(ROOT_CONTEXT, header, GETTER);
    const operation = operationOf(route);
    const offset = Date.now() - performance.now();
    const root = this.tracer.startSpan(`${method} ${route}`, {
      kind: SpanKind.SERVER,
      startTime: millisToHrTime(startedAt + offset),
      attributes: { [ATTR.httpMethod]: method, [ATTR.httpRoute]: route, [ATTR.operation]: operation, [ATTR.requestId]: requestId },
    }, parent);
    return new RequestTrace(this.tracer, root, startedAt, operation, offset);
  }

  /**
   * Export what is queued, then stop (at shutdown). Waits at most `graceMs`: a collector
   * that is stuck must not keep the process from exiting.
   */
  shutdown(graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, graceMs);
      t.unref();
      this.provider.shutdown().then(resolve, resolve).finally(() => clearTimeout(t));
    });
  }
}
