// One HTTP exchange over a uWS response: body already read, headers captured, and
// the writes an endpoint needs (JSON, or an event stream with backpressure).
// After the client aborts, every write becomes a no-op: uWS must not be touched then.

import { randomUUID } from 'node:crypto';
import type { HttpResponse } from './uws.js';
import type { Exchange, ModelStatsRef, Route } from '../api/exchange.js';
import { statusLine } from '../protocol/errors.js';
import { RequestCancellation } from './request-cancellation.js';
import type { LimitTicket } from '../pipeline/rate-limit.js';
import type { RequestTrace } from '../tracing/request-trace.js';

export class UwsExchange implements Exchange {
  private finished = false;
  private aborted = false;
  /** Created only when a handler asks for the signal: most requests never need one. */
  private ac: AbortController | null = null;
  /** Likewise, for generations (no AbortController). */
  private cancel: RequestCancellation | null = null;
  private drained: (() => void) | null = null;
  /** Told once when the exchange is over: response ended, client gone, or aborted by the server. */
  owner: ExchangeOwner | null = null;
  /** The route being served (set by the server; its owner reads it at the end). */
  route: Route | null = null;
  /** Set by the server when this request counts against the concurrent-generation limit. */
  countsAsGenerating = false;
  /** The server's request deadline timer, if it set one. */
  timer: ReturnType<typeof setTimeout> | null = null;
  /** What the metrics need at the end: set by describe() and by the writes. */
  readonly startedAt = performance.now();
  model: ModelStatsRef | null = null;
  stream = false;
  status = 0;
  clientLeft = false;
  /** How often a slow reader made this stream pause its producer. */
  pauses = 0;
  /** Bytes written into uWS that the socket did not take yet (counted in the model's stream_buffered_bytes). */
  private buffered = 0;
  /** Set by the server on generation routes: describe() then counts the request as in flight. */
  countsInflight = false;
  private counted = false;
  /** The allowed origin to echo in Access-Control-Allow-Origin, when CORS allows this request's. */
  corsOrigin: string | null = null;
  /** Headers a handler added (addResponseHeader): written with the head. */
  private added: [string, string][] | null = null;
  /** A HEAD request: answered with the status and headers its GET would get, and no body. */
  head = false;
  /** The API key's rate-limit budget (generation routes, limits configured), else null. */
  rateLimit: LimitTicket | null = null;
  /** The request's trace (set by the server on generation routes when tracing is on). */
  trace: RequestTrace | null = null;

  constructor(
    private readonly res: HttpResponse,
    /** Lower-cased names and values, alternating, as uWS gave them (every line, duplicates too). */
    readonly headers: readonly string[],
    readonly requestId: string,
    public body: Buffer = EMPTY,
  ) {}

  private engineId: string | null = null;

  get engineRequestId(): string {
    // A generated request id is Portico's own and unique: the engine gets it as is. A
    // client's id is kept as a prefix, so that the engine's log can be searched for it,
    // and made unique with a random suffix.
    return (this.engineId ??= this.header('x-request-id') === this.requestId ? `${this.requestId}-${randomUUID()}` : this.requestId);
  }

  /** For the log beside request_id: the engine id when one was made and differs, else undefined. */
  get engineIdForLog(): string | undefined {
    return this.engineId !== null && this.engineId !== this.requestId ? this.engineId : undefined;
  }

  get signal(): AbortSignal {
    if (!this.ac) {
      this.ac = new AbortController();
      if (this.aborted) this.ac.abort();
    }
    return this.ac.signal;
  }

  get cancellation(): RequestCancellation {
    if (!this.cancel) {
      this.cancel = new RequestCancellation();
      if (this.aborted) this.cancel.abort();
    }
    return this.cancel;
  }

  get done(): boolean {
    return this.finished || this.aborted;
  }

  private abort(): void {
    this.aborted = true;
    this.ac?.abort();
    this.cancel?.abort();
  }

  describe(model: ModelStatsRef, stream: boolean): void {
    this.model = model;
    this.stream = stream;
    if (this.trace !== null) this.trace.describe(model.name, stream);
    if (this.countsInflight && !this.counted && !this.done) {
      this.counted = true;
      model.stats.inflight.inc();
    }
  }

  /** Path parameters, captured while the uWS request was still valid. */
  params: string[] = [];
  /** The query string (without '?'), captured with them. */
  query = '';

  param(i: number): string {
    return this.params[i] ?? '';
  }

  header(name: string): string {
    return headerIn(this.headers, name) ?? '';
  }

  /** Count `bytes` more (or, with 0, none) as held by uWS for this response. */
  private setBuffered(bytes: number): void {
    if (bytes === this.buffered) return;
    this.model?.stats.streamBuffered.inc(bytes - this.buffered);
    this.buffered = bytes;
  }

  private over(): void {
    this.setBuffered(0);
    if (this.counted) {
      this.counted = false;
      this.model!.stats.inflight.dec();
    }
    const owner = this.owner;
    this.owner = null;
    owner?.finished(this);
  }

  /** Called by the server from uWS's onAborted. */
  clientGone(): void {
    this.refusing = false;
    if (this.finished) return;
    this.finished = true;
    this.clientLeft = true;
    this.abort();
    this.drained?.();
    this.drained = null;
    this.over();
  }

  /** The server gives up on this exchange (shutdown deadline): abort the work, close the connection. */
  abortFromServer(): void {
    if (this.done) return;
    this.finished = true;
    this.abort();
    this.drained?.();
    this.drained = null;
    this.res.cork(() => this.res.close());
    this.over();
  }

  /**
   * The request ran past its deadline: answer with `error` (a status and body when nothing
   * was sent yet, else a final SSE event), then abort its work.
   */
  expire(status: number, body: string, sseEvent: string): void {
    if (this.done) return;
    if (this.status === 0) this.sendJson(status, body);
    else {
      this.writeEvent(sseEvent);
      this.endEventStream();
    }
    this.abort();
  }

  addResponseHeader(name: string, value: string): void {
    if (this.done || this.status !== 0) return;
    (this.added ??= []).push([name, value]);
  }

  /** The caller's headers plus the added ones (a name the caller sets is not repeated). */
  private withAdded(extra: readonly [string, string][]): readonly [string, string][] {
    const a = this.added;
    if (a === null) return extra;
    return [...extra, ...a.filter(([n]) => !hasHeader(extra, n))];
  }

  sendJson(status: number, body: string, closeConnection = false, extraHeaders: readonly [string, string][] = []): void {
    this.send(status, body, 'application/json', closeConnection, extraHeaders);
  }

  sendText(status: number, body: string, contentType: string): void {
    this.send(status, body, contentType, false, []);
  }

  /** Set while an early answer waits for the rest of the request body (refuseBody). */
  private refusing = false;

  /**
   * Answer a request whose body is still arriving (413): status, headers and body go out
   * now (chunked), and the response ends only at endRefusal(), once the body has been
   * read and dropped. Closing at once would make the client's next write fail (EPIPE)
   * before it reads the answer: Node's fetch then reports no response at all.
   */
  refuseBody(status: number, body: string): void {
    if (this.done) return;
    this.finished = true;
    this.status = status;
    this.refusing = true;
    const res = this.res;
    res.cork(() => {
      res.writeStatus(statusLine(status)).writeHeader('content-type', 'application/json').writeHeader('x-request-id', this.requestId);
      if (this.corsOrigin) res.writeHeader('access-control-allow-origin', this.corsOrigin).writeHeader('vary', 'Origin');
      res.write(body);
    });
    this.over();
  }

  /**
   * The refused body has been dropped: end the response (the connection stays usable, its
   * request read to the end). With `cut`, the client sent more than the server will drop:
   * close the connection instead. (end('', true) after write() puts a stray
   * "Connection: close" line into the chunked body in uWS.)
   */
  endRefusal(cut: boolean): void {
    if (!this.refusing) return;
    this.refusing = false;
    if (cut) this.res.close();
    else this.res.cork(() => this.res.end(''));
  }

  private send(status: number, body: string, contentType: string, closeConnection: boolean, extraHeaders: readonly [string, string][]): void {
    if (this.done) return;
    this.finished = true;
    this.status = status;
    // One corked write of status, headers and body, through a function made once (not a
    // closure per response); cork runs it synchronously, so the module-level slot is safe.
    corked.ex = this;
    corked.body = body;
    corked.contentType = contentType;
    // While draining, no connection is kept alive: a client that keeps reusing one would
    // otherwise hold a drained shard's thread open.
    corked.close = closeConnection || this.owner?.draining === true;
    corked.extra = this.withAdded(extraHeaders);
    this.res.cork(writeCorked);
    corked.ex = null;
    corked.body = '';
    corked.extra = NO_HEADERS;
    this.over();
  }

  /** Status, headers and body of a complete response; called inside cork(). */
  writeResponse(body: string, contentType: string, closeConnection: boolean, extraHeaders: readonly [string, string][]): void {
    const res = this.res;
    const status = this.status;
    // uWS answers 200 OK when no status is written.
    if (status !== 200) res.writeStatus(statusLine(status));
    for (let i = 0; i < extraHeaders.length; i++) res.writeHeader(extraHeaders[i][0], extraHeaders[i][1]);
    // Every overload answer says when to come back, whoever raised it (RFC 9110 §10.2.3).
    if ((status === 503 || status === 529) && !hasHeader(extraHeaders, 'retry-after')) res.writeHeader('retry-after', DEFAULT_RETRY_AFTER_SECS);
    if (this.corsOrigin) res.writeHeader('access-control-allow-origin', this.corsOrigin).writeHeader('vary', 'Origin');
    res.writeHeader('content-type', contentType).writeHeader('x-request-id', this.requestId);
    if (status === 204 || status === 304) {
      // No body and no Content-Length (RFC 9110 §8.6, §15.3.5). uWS 20.30 could not end a
      // response without a length and close the connection in one call (it aborted the
      // process when asked; not re-checked on 20.58), so the connection stays open.
      res.endWithoutBody();
    } else if (this.head) {
      // The GET's Content-Length, no body. (uWS's endWithoutBody(n) with n > 0 leaves the
      // response open, so the length is written as a header; such a response could not also
      // close the connection in uWS 20.30, not re-checked on 20.58, so a HEAD answer keeps it.)
      res.writeHeader('content-length', String(Buffer.byteLength(body))).endWithoutBody();
    } else {
      res.end(body, closeConnection);
    }
  }

  /**
   * Event-stream writes are batched: startEventStream and writeEvent only queue text, and
   * everything one event-loop turn queued for this stream (the head, the chunks of one or
   * more engine messages) goes out as one corked uWS write at the end of the turn (a single
   * setImmediate for all streams), or at once with endEventStream. No timer: the first
   * token leaves in the turn it was made in. See docs/architecture.md ("Per-token path").
   */
  private pending = '';
  /** The 200 head is queued and not written yet. */
  private headPending = false;
  /** In the flush queue of this turn (cleared by flushAll). */
  queued = false;
  /** The last flush left bytes in uWS: the producer waits on this until the socket drains. */
  private blocked: Promise<void> | null = null;
  /** After coalesceEvents(ms): at most one write per this many ms (0: one per turn). */
  private flushEveryMs = 0;
  /** When this stream last wrote (performance.now(); only kept while coalescing). */
  private lastFlush = 0;

  startEventStream(): void {
    if (this.done) return;
    this.status = 200;
    this.headPending = true;
    this.queueFlush();
  }

  writeEvent(chunk: string): Promise<void> | undefined {
    if (this.done) return undefined;
    this.pending += chunk;
    // A turn that made a lot (a fast engine, many messages in one read) writes every
    // FLUSH_AT bytes: what uWS holds for a slow reader stays at about one write.
    if (this.pending.length >= FLUSH_AT) this.flushEvents();
    else this.queueFlush();
    return this.blocked ?? undefined;
  }

  /**
   * From now on, write this stream's queued text at most once per `ms`: text queued within
   * `ms` of the last write waits for one timer shared by every stream (it then waits at most
   * `ms`). A stream whose events come further apart than that is written in the turn each
   * event is made, as without coalescing. The SSE writer calls this once its first event is out, so the
   * first token is never held. See docs/architecture.md ("Per-token path").
   */
  coalesceEvents(ms: number): void {
    this.flushEveryMs = ms > 0 ? ms : 0;
    if (ms > 0) this.lastFlush = performance.now();
  }

  private queueFlush(): void {
    if (this.queued) return;
    this.queued = true;
    if (this.flushEveryMs > 0 && performance.now() - this.lastFlush < this.flushEveryMs) {
      heldQueue.push(this);
      if (heldQueue.length === 1) setTimeout(flushHeld, this.flushEveryMs);
      return;
    }
    flushQueue.push(this);
    if (flushQueue.length === 1) setImmediate(flushAll);
  }

  /** The queued head and text, in one corked write (from flushAll). */
  flushEvents(): void {
    // (While blocked, queued text waits for the drain: uWS holds one write at most.)
    if (this.done || this.blocked || (!this.headPending && this.pending === '')) return;
    eventSlot.ex = this;
    this.res.cork(writeEventsCorked);
    eventSlot.ex = null;
    const ok = eventSlot.ok;
    const chunk = this.pending;
    this.pending = '';
    if (this.flushEveryMs > 0) this.lastFlush = performance.now();
    if (ok) return;
    // The text is buffered in uWS: the producer's next write waits until the socket drains.
    this.pauses++;
    this.setBuffered(this.buffered + Buffer.byteLength(chunk));
    this.blocked = new Promise<void>((resolve) => {
      this.drained = resolve;
      this.res.onWritable(() => {
        this.setBuffered(0);
        this.blocked = null;
        if (this.pending !== '') this.queueFlush();
        const r = this.drained;
        this.drained = null;
        r?.();
        return true;
      });
    });
  }

  /** Head and queued text; called inside cork(). Returns false when uWS kept some of it. */
  writeEvents(end: boolean): boolean {
    const res = this.res;
    if (this.headPending) {
      this.headPending = false;
      res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream').writeHeader('cache-control', 'no-cache').writeHeader('x-request-id', this.requestId);
      if (this.added) for (const [n, v] of this.added) res.writeHeader(n, v);
      if (this.corsOrigin) res.writeHeader('access-control-allow-origin', this.corsOrigin).writeHeader('vary', 'Origin');
    }
    if (end) {
      // write() then end(): end(text) on a response with nothing written yet would send it
      // with a content-length instead of chunked, as the stream always was. Not closed
      // while draining (end(…, true) cut a chunked stream before its last chunk reached
      // the client); the next request on this connection closes it instead.
      if (this.pending !== '') res.write(this.pending);
      res.end();
      return true;
    }
    return res.write(this.pending);
  }

  endEventStream(): void {
    if (this.done) return;
    this.finished = true;
    eventSlot.ex = this;
    eventSlot.end = true;
    this.res.cork(writeEventsCorked);
    eventSlot.ex = null;
    eventSlot.end = false;
    this.pending = '';
    this.blocked = null;
    this.over();
  }
}

/** Text (UTF-16 units) a stream queues before it writes without waiting for the turn's end. */
const FLUSH_AT = 8 * 1024;

/** Exchanges with event-stream text queued this turn; flushed by one setImmediate. */
const flushQueue: UwsExchange[] = [];
const flushAll = (): void => flushEach(flushQueue);

/**
 * Coalescing streams (coalesceEvents) with text queued within their interval of their last
 * write; flushed together by one timer, armed by the first of them.
 */
const heldQueue: UwsExchange[] = [];
const flushHeld = (): void => flushEach(heldQueue);

function flushEach(queue: UwsExchange[]): void {
  // (A flush may resolve a producer's promise; its writes land in a later flush.)
  for (let i = 0; i < queue.length; i++) {
    const ex = queue[i];
    ex.queued = false;
    ex.flushEvents();
  }
  // Emptied by pops: `queue.length = 0` is a runtime call and gives the store up each turn.
  while (queue.length !== 0) queue.pop();
}

const EMPTY = Buffer.alloc(0);
/** Retry-After on a 503/529 whose error named no time of its own. */
const DEFAULT_RETRY_AFTER_SECS = '1';

function hasHeader(headers: readonly [string, string][], name: string): boolean {
  for (let i = 0; i < headers.length; i++) if (headers[i][0] === name) return true;
  return false;
}

/** The value of a header in a [name, value, ...] list; the last one wins, as a Map's set did. */
export function headerIn(headers: readonly string[], name: string): string | undefined {
  for (let i = headers.length - 2; i >= 0; i -= 2) if (headers[i] === name) return headers[i + 1];
  return undefined;
}
const NO_HEADERS: readonly [string, string][] = [];

/** What the server's end-of-exchange bookkeeping needs (one object per server). */
export interface ExchangeOwner {
  finished(ex: UwsExchange): void;
  /** True once the server drains: every response then closes its connection. */
  readonly draining: boolean;
}

const corked = { ex: null as UwsExchange | null, body: '', contentType: '', close: false, extra: NO_HEADERS };
function writeCorked(): void {
  corked.ex!.writeResponse(corked.body, corked.contentType, corked.close, corked.extra);
}

const eventSlot = { ex: null as UwsExchange | null, end: false, ok: true };
function writeEventsCorked(): void {
  eventSlot.ok = eventSlot.ex!.writeEvents(eventSlot.end);
}
