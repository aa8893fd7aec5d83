// What runGeneration adds to a traced request: the route phase (the chosen worker, its KV
// overlap, the queue wait, the prefill worker of a disaggregated pair) and the engine call,
// a span opened at dispatch whose context goes to the engine in the Generate metadata (on
// every leg: prefill, decode, a migration's continuation). The engine span learns the
// first token, each choice's finish reason, the token counts and the migrations from the
// events the loop hands its sink; it ends at the end event or when the generation fails
// or is stopped. Made only for traced requests: with tracing off runGeneration makes none.

import { SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import type { Dispatch } from '../router/types.js';
import { ATTR } from '../tracing/attributes.js';
import { traceHeaders, type RequestTrace } from '../tracing/request-trace.js';
import type { ParsedEvent } from './outputs.js';
import type { GenerationRequest } from './request.js';
import type { GenerationSink, RunningGeneration, SinkResult } from './sink.js';

export class GenerationTrace implements GenerationSink {
  private readonly engine: Span;
  private readonly dispatchedAt: number;
  private firstAt = 0;
  private readonly reasons: string[] = [];
  private migrations = 0;
  private over = false;

  constructor(
    private readonly trace: RequestTrace,
    req: GenerationRequest,
    d: Dispatch,
    routeStart: number,
    /** When the router's answer came (after the queue, if the request waited in it). */
    routed: number,
    private readonly inner: GenerationSink,
  ) {
    const url = d.worker.client.url;
    const route: Attributes = {
      [ATTR.worker]: url,
      [ATTR.workerId]: d.worker.id,
      [ATTR.kvOverlapBlocks]: d.overlapBlocks,
      [ATTR.queued]: d.queuedMs > 0,
    };
    if (d.dpRank !== undefined) route[ATTR.dpRank] = d.dpRank;
    if (d.prefill) {
      route[ATTR.prefillWorker] = d.prefill.worker.client.url;
      if (d.prefill.dpRank !== undefined) route[ATTR.prefillDpRank] = d.prefill.dpRank;
    }
    if (d.queuedMs > 0) {
      route[ATTR.timeInQueue] = d.queuedMs / 1000;
      trace.phase('queue', Math.max(routeStart, routed - d.queuedMs), routed);
    }
    trace.phase('route', routeStart, routed, route);
    this.dispatchedAt = performance.now();
    const p = req.engine;
    const engine: Attributes = {
      [ATTR.serverAddress]: url,
      [ATTR.worker]: url,
      [ATTR.engineRequestId]: p.requestId,
      [ATTR.requestModel]: req.model.name,
      [ATTR.inputTokens]: req.promptIds.length,
      [ATTR.choiceCount]: p.n ?? 1,
    };
    if (p.maxNewTokens !== undefined) engine[ATTR.maxTokens] = p.maxNewTokens;
    if (p.temperature !== undefined) engine[ATTR.temperature] = p.temperature;
    if (p.topP !== undefined) engine[ATTR.topP] = p.topP;
    if (d.prefill) engine[ATTR.prefillWorker] = d.prefill.worker.client.url;
    this.engine = trace.open('engine.generate', this.dispatchedAt, engine);
    // Every leg of this generation (prefill, decode, continuations) carries the engine span's context.
    p.traceHeaders = traceHeaders(this.engine);
  }

  begin(g: RunningGeneration): void {
    this.inner.begin?.(g);
  }

  event(ev: ParsedEvent): SinkResult {
    if (this.firstAt === 0) this.firstAt = performance.now();
    if (ev.kind === 'finish') this.reasons[ev.index] = ev.reason;
    else if (ev.kind === 'end') this.ended(ev.usage.promptTokens, ev.usage.completionTokens, ev.usage.cachedTokens);
    return this.inner.event(ev);
  }

  /** The request moved to another worker (migration). */
  moved(d: Dispatch): void {
    this.migrations++;
    if (this.trace.recording) this.engine.addEvent('migration', { [ATTR.worker]: d.worker.client.url, [ATTR.workerId]: d.worker.id });
  }

  /** The generation failed: the engine span ends with the error. */
  failed(err: unknown): void {
    if (this.over) return;
    this.over = true;
    if (!this.trace.recording) return;
    const e = err as { status?: unknown; code?: unknown };
    this.engine.setAttribute(ATTR.errorType, typeof e?.code === 'string' ? e.code : String(e?.status ?? 'error'));
    this.engine.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    this.close();
  }

  /** runGeneration resolved: without an end event, the generation was stopped (client gone, sink's STOP). */
  settled(): void {
    if (this.over) return;
    this.over = true;
    if (!this.trace.recording) return;
    this.engine.setAttribute(ATTR.cancelled, true);
    this.close();
  }

  private ended(input: number, output: number, cached: number): void {
    if (this.over) return;
    this.over = true;
    const now = performance.now();
    this.trace.responding(now);
    if (!this.trace.recording) return;
    const usage: Attributes = {
      [ATTR.inputTokens]: input,
      [ATTR.outputTokens]: output,
      [ATTR.cachedTokens]: cached,
      [ATTR.finishReasons]: this.reasons.filter((r) => r !== undefined),
    };
    this.engine.setAttributes(usage);
    this.trace.setAttributes(usage);
    if (this.firstAt > 0) {
      const ttft = (this.firstAt - this.trace.startedAt) / 1000;
      this.engine.setAttribute(ATTR.timeToFirstToken, (this.firstAt - this.dispatchedAt) / 1000);
      this.trace.setAttributes({ [ATTR.timeToFirstToken]: ttft });
    }
    this.close(now);
  }

  private close(at = performance.now()): void {
    if (this.migrations > 0) this.engine.setAttribute(ATTR.migrations, this.migrations);
    this.engine.end(this.trace.time(at));
  }
}
