// One traced request: its server span (the request from its headers to its last byte) and
// the frontend's phases under it, each a child span. Phases that are over when Portico
// learns of them (receive, validate, tokenize, route, queue, response) are made with their
// start and end times at once; the engine call is a span opened at dispatch, because its
// id goes to the engine as the parent of the engine's own spans (traceparent metadata).
// A request the sampler did not pick still carries its context to the engine (flags 00),
// and makes no phase spans.

import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type HrTime, type Span, type Tracer } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import { ATTR } from './attributes.js';

export class RequestTrace {
  /** The server span's context: the parent of every phase. */
  private readonly ctx: Context;
  /** Whether the sampler picked this request (phase spans are made). */
  readonly recording: boolean;
  private tokenizeFrom = 0;
  private respondFrom = 0;
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    /** The request's server span. */
    readonly root: Span,
    /** When the request's headers were read (performance.now()). */
    readonly startedAt: number,
    /** gen_ai.operation.name: chat, text_completion... */
    private readonly operation: string,
    /**
     * Wall clock minus performance.now() (ms), taken once for the request: every time of its
     * spans goes through it, so the spans nest exactly (the SDK's own conversion takes a new
     * offset per span, off by up to a millisecond).
     */
    private readonly offset: number,
  ) {
    this.ctx = trace.setSpan(ROOT_CONTEXT, root);
    this.recording = root.isRecording();
  }

  /** The model is known: the span is named for the operation on it (GenAI conventions). */
  describe(model: string, stream: boolean): void {
    if (!this.recording) return;
    this.root.updateName(`${this.operation} ${model}`);
    this.root.setAttribute(ATTR.requestModel, model);
    this.root.setAttribute(ATTR.stream, stream);
  }

  setAttributes(a: Attributes): void {
    if (this.recording) this.root.setAttributes(a);
  }

  /**
   * The body was read at `arrived` and the request admitted and validated now: the
   * receive and validate phases.
   */
  validated(arrived: number): void {
    const now = performance.now();
    this.tokenizeFrom = now;
    if (!this.recording) return;
    this.phase('receive', this.startedAt, arrived);
    this.phase('validate', arrived, now);
  }

  /** The prompt was rendered and tokenized (since validated()). */
  tokenized(promptTokens: number): void {
    if (!this.recording || this.tokenizeFrom === 0) return;
    this.phase('tokenize', this.tokenizeFrom, performance.now(), { [ATTR.promptTokens]: promptTokens });
  }

  /** A phase that is over. */
  phase(name: string, start: number, end: number, attributes?: Attributes): void {
    if (!this.recording) return;
    this.tracer.startSpan(name, { startTime: this.time(start), attributes }, this.ctx).end(this.time(end));
  }

  /**
   * A phase under way (the engine call): its span, ended by the caller with a time from
   * time(); non-recording when this request is not sampled.
   */
  open(name: string, start: number, attributes: Attributes): Span {
    if (!this.recording) return this.root;
    return this.tracer.startSpan(name, { kind: SpanKind.CLIENT, startTime: this.time(start), attributes }, this.ctx);
  }

  /** A performance.now() time as the spans' wall-clock time. */
  time(t: number): HrTime {
    return millisToHrTime(t + this.offset);
  }

  /** The engine's output is over: the response phase runs from here to the last byte. */
  responding(at: number): void {
    this.respondFrom = at;
  }

  /** The response ended (or the client left): the response phase, the status, the server span's end. */
  end(status: number, clientLeft: boolean): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.recording) return;
    const now = performance.now();
    if (this.respondFrom > 0) this.phase('response', this.respondFrom, now);
    const root = this.root;
    root.setAttribute(ATTR.e2e, (now - this.startedAt) / 1000);
    if (clientLeft) root.setAttribute(ATTR.cancelled, true);
    if (status > 0) root.setAttribute(ATTR.httpStatus, status);
    if (status >= 500) {
      root.setAttribute(ATTR.errorType, String(status));
      root.setStatus({ code: SpanStatusCode.ERROR });
    }
    root.end(this.time(now));
  }
}

/** The W3C trace context of `span` as gRPC metadata (flat name, value pairs), as vLLM and SGLang read it. */
export function traceHeaders(span: Span): readonly string[] {
  const c = span.spanContext();
  const parent = `00-${c.traceId}-${c.spanId}-0${(c.traceFlags & 0xff).toString(16)}`;
  const state = c.traceState?.serialize();
  return state ? ['traceparent', parent, 'tracestate', state] : ['traceparent', parent];
}
