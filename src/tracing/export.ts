// The way out for ended spans: the SDK's BatchSpanProcessor (batches on a timer) over the
// OTLP exporter of the configured protocol, behind a bound of Portico's own so that what is
// dropped is counted: a span ended while the queue holds maxQueueSize is dropped at once,
// never waited for. Exports run off the request path; a collector that is down costs a
// failed export per batch (counted and logged once per outage), never a request's time.

import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { Context } from '@opentelemetry/api';
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { TracingSettings } from './settings.js';
import { log } from '../log.js';

/** What became of ended spans (Prometheus counters in the frontend). */
export interface SpanOutcomes {
  exported(n: number): void;
  failed(n: number): void;
  dropped(n: number): void;
}

export const NO_OUTCOMES: SpanOutcomes = { exported: () => undefined, failed: () => undefined, dropped: () => undefined };

/** The span processor of `s`: bounded, batched, exporting over OTLP. */
export function exportProcessor(s: TracingSettings, outcomes: SpanOutcomes): SpanProcessor {
  const otlp = s.protocol === 'grpc'
    ? new GrpcExporter({ url: s.endpoint, timeoutMillis: s.exportTimeoutMs })
    : new ProtoExporter({ url: s.endpoint, timeoutMillis: s.exportTimeoutMs });
  const bound = new BoundedQueue(s.maxQueueSize, outcomes);
  const exporter = new CountingExporter(otlp, bound, outcomes, s.endpoint);
  bound.inner = new BatchSpanProcessor({
    exporter,
    maxQueueSize: s.maxQueueSize,
    maxExportBatchSize: s.maxExportBatchSize,
    scheduledDelayMillis: s.scheduleDelayMs,
    exportTimeoutMillis: s.exportTimeoutMs,
  });
  return bound;
}

/** Counts the spans between onEnd and their export; past the bound, drops (and counts) them. */
class BoundedQueue implements SpanProcessor {
  inner: SpanProcessor | null = null;
  queued = 0;

  constructor(
    private readonly max: number,
    private readonly outcomes: SpanOutcomes,
  ) {}

  onStart(_span: Span, _ctx: Context): void {}

  onEnd(span: ReadableSpan): void {
    if (this.queued >= this.max) {
      this.outcomes.dropped(1);
      return;
    }
    this.queued++;
    this.inner!.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.inner!.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner!.shutdown();
  }
}

class CountingExporter implements SpanExporter {
  private failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly queue: BoundedQueue,
    private readonly outcomes: SpanOutcomes,
    private readonly endpoint: string,
  ) {}

  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    const n = spans.length;
    // Out of the queue once handed to the exporter: a slow or failing export no longer holds them.
    this.queue.queued = Math.max(0, this.queue.queued - n);
    this.inner.export(spans, (r) => {
      if (r.code === ExportResultCode.SUCCESS) {
        this.outcomes.exported(n);
        if (this.failing) log.info('trace export works again', { endpoint: this.endpoint });
        this.failing = false;
      } else {
        this.outcomes.failed(n);
        if (!this.failing) log.warn('trace export failed; spans are dropped until it works again', { endpoint: this.endpoint, error: String(r.error?.message ?? r.error) });
        this.failing = true;
      }
      done(r);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
