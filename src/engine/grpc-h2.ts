// A gRPC server-streaming call on the engine client's own HTTP/2 connection (src/engine/h2/),
// for the one rpc whose per-message cost matters: Generate. Connect's generic client pipes
// every response message through several layers of async iterables, a linked
// AbortController and a ping-timer reset per read; measured in-process against the echo
// mock that was ~2 ms of CPU for an 8-token request (bench/engine-path.bench.ts), and
// node:http2 below it costs a call from C++ into JS per DATA frame (bench/RESULTS.md,
// "Engine HTTP/2 in JS"). Connection handling (connect timeout, keep-alive PINGs, idle
// close, GOAWAY, reconnect) is src/engine/h2/client.ts; the status handling (HTTP status
// to code, the gRPC content type, a non-OK grpc-status with its message and details) is
// Connect's protocol-grpc helpers; this file only frames messages and routes the stream's
// events.
//
// Wire (grpc/doc/PROTOCOL-HTTP2.md): request HEADERS + one length-prefixed
// message + END_STREAM; response HEADERS (:status 200, application/grpc),
// length-prefixed messages, trailers with grpc-status / grpc-message, or a
// trailers-only response. Identity encoding only (we never offer another).

import { Code, ConnectError } from '@connectrpc/connect';
import { codeFromHttpStatus, findTrailerError, grpcStatusOk, parseContentType } from '@connectrpc/connect/protocol-grpc';

import type { H2Client } from './h2/client.js';
import { FixedDeadlines, type Deadline } from './deadlines.js';
import type { H2Stream, H2StreamHandler } from './h2/session.js';

/** The trailers that carry a call's status. */
const STATUS_TRAILERS = ['grpc-status', 'grpc-message', 'grpc-status-details-bin'] as const;

/** A server stream the caller reads with next() and may stop in two ways. */
export interface ServerStream<T> extends AsyncIterator<T> {
  /**
   * Stop delivering at once (next() rejects with Code.Canceled) and reset the
   * stream (RST_STREAM CANCEL): now, or, when `after` is given, once it
   * settles (false: at once; true: after a short grace) if the worker has not
   * ended the stream by then. Callers pass their Abort rpc as `after`: a
   * worker that honours it ends the stream itself, and no reset is sent.
   */
  cancel(after?: PromiseLike<boolean>): void;
  /** Stop delivering but let the stream end normally (read to its trailers). */
  detach(): void;
  /**
   * Push mode, instead of next(): every message, then the end or the failure, is handed to
   * `l` as it is read (in the data callback; no promise per message). hold() makes it queue
   * messages instead (the stream is paused past a high-water mark), release() delivers them
   * and goes on. Streams without it are read with next() (pumpStream adapts them).
   */
  listen?(l: StreamListener<T>): void;
  hold?(): void;
  release?(): void;
}

/** A push-mode stream's listener once nothing more is delivered to it. */
const SETTLED: StreamListener<never> = { message: () => undefined, end: () => undefined, fail: () => undefined };

/** What a server stream in push mode hands its messages to. */
export interface StreamListener<T> {
  message(m: T): void;
  end(): void;
  fail(err: unknown): void;
}

/**
 * Push mode for a stream that only has next(): one read at a time, each message handed to
 * `l`; hold() stops reading until release(). (The Connect transport's streams and test fakes.)
 */
export function pumpStream<T>(it: AsyncIterator<T>, l: StreamListener<T>): { hold(): void; release(): void } {
  let held = false;
  let reading = false;
  let over = false;
  // What a read brought while the consumer took hold (the read was already under way).
  let stash: IteratorResult<T> | { failed: unknown } | null = null;
  const pump = async () => {
    if (reading) return;
    reading = true;
    while (!over && !held) {
      let r: IteratorResult<T> | { failed: unknown };
      if (stash) {
        r = stash;
        stash = null;
      } else {
        try {
          r = await it.next();
        } catch (err) {
          r = { failed: err };
        }
        if (held) {
          stash = r;
          break;
        }
      }
      if ('failed' in r) {
        over = true;
        l.fail(r.failed);
      } else if (r.done) {
        over = true;
        l.end();
      } else l.message(r.value);
    }
    reading = false;
  };
  void pump();
  return {
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      void pump();
    },
  };
}

/** The request headers of a Generate besides the pseudo-headers (H2ClientOptions.headers). */
export const GRPC_REQUEST_HEADERS: readonly string[] = [
  'content-type', 'application/grpc+proto',
  'te', 'trailers',
  'grpc-accept-encoding', 'identity',
  'user-agent', 'portico-engine-client',
];

/** After an acknowledged Abort rpc, how long the worker has to end the stream before we reset it. */
const ABORT_GRACE_MS = 1000;

/** Queued messages past which the HTTP/2 stream is paused (flow control pushes back on the worker). */
const HIGH_WATER = 64;

/**
 * The worker did not answer a Generate at all (no response message) within the
 * first-response deadline: it accepted the request and went silent. Unlike an engine's
 * own DEADLINE_EXCEEDED, this says the worker is not serving (the pool takes it out of
 * rotation until its health check passes).
 */
export class FirstResponseTimeout extends ConnectError {
  /** A brand: ConnectError's own Symbol.hasInstance makes every ConnectError pass `instanceof`. */
  readonly firstResponseTimeout = true;
  constructor(readonly afterMs: number) {
    super(`no response from the worker within ${afterMs} ms`, Code.DeadlineExceeded);
  }
}

/** True for a failure the worker itself answered with (a grpc-status), not a transport failure. */
export function isWorkerStatus(err: unknown): boolean {
  return (err as { workerStatus?: unknown } | null)?.workerStatus === true;
}

export function isFirstResponseTimeout(err: unknown): err is FirstResponseTimeout {
  return (err as { firstResponseTimeout?: unknown } | null)?.firstResponseTimeout === true;
}

/** One length-prefixed gRPC message. */
export function frameMessage(bytes: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + bytes.length);
  out[0] = 0;
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
}

/**
 * Open `path` on `client`'s connection, send `frame` (one gRPC length-prefixed
 * message, see frameMessage) and yield every response message through `decode`. Failures reject next()
 * with a ConnectError whose code follows gRPC's status (or, for transport
 * failures, Unavailable / Aborted / Internal as connect-node would report them).
 */
export function openServerStream<T>(
  client: H2Client, path: string, frame: Buffer | readonly Buffer[], decode: (bytes: Uint8Array, start: number, end: number) => T,
  firstResponseMs = 0,
  /** Request metadata sent after the client's fixed headers (flat name, value pairs), if any. */
  metadata?: readonly string[],
): ServerStream<T> {
  return new H2ServerStream(client, path, frame, decode, firstResponseMs, metadata);
}

class H2ServerStream<T> implements ServerStream<T>, H2StreamHandler {
  private readonly stream: H2Stream;
  private readonly queue: T[] = [];
  private head = 0;
  private pending: Buffer | undefined;
  private status: number | undefined;
  private statusMessage = '';
  private failure: ConnectError | undefined;
  private ended = false;
  private cancelled = false;
  private detached = false;
  private paused = false;
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  /** The first-response deadline, until the first byte of a response message (or the end). */
  private firstDeadline: Deadline<H2ServerStream<unknown>> | undefined;
  /** Push mode (listen): where messages go, whether the consumer holds them, whether the end or failure went out. */
  private listener: StreamListener<T> | undefined;
  private held = false;
  private settledOut = false;

  constructor(
    client: H2Client,
    path: string,
    body: Buffer | readonly Buffer[],
    /** One message from `bytes[start, end)` (read in place: no view per message). */
    private readonly decode: (bytes: Uint8Array, start: number, end: number) => T,
    firstResponseMs: number,
    metadata: readonly string[] | undefined,
  ) {
    if (firstResponseMs > 0) this.firstDeadline = firstResponseDeadlines(firstResponseMs).add(this as unknown as H2ServerStream<unknown>);
    this.stream = metadata === undefined ? client.request(path, body, this) : client.requestWithExtraHeaders(path, metadata, body, this);
  }

  next(): Promise<IteratorResult<T>> {
    if (this.head < this.queue.length) {
      const value = this.queue[this.head]!;
      this.queue[this.head++] = undefined as T;
      this.drained();
      return Promise.resolve({ value, done: false });
    }
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    this.cancel();
    return Promise.resolve({ value: undefined, done: true });
  }

  listen(l: StreamListener<T>): void {
    this.listener = l;
    this.flush();
  }

  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.flush();
  }

  /** After messages were taken: reset an emptied queue, resume a paused stream that fell below half the high water. */
  private drained(): void {
    // (Emptied only when something was queued: setting an array's length is a runtime call,
    // and in push mode the queue is usually never used.)
    if (this.head !== 0 && this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    if (this.paused && this.queue.length - this.head < HIGH_WATER / 2) {
      this.paused = false;
      this.stream.resume();
    }
  }

  /** Push mode: hand queued messages over until held, then the end or failure once everything is out. */
  private flush(): void {
    const l = this.listener;
    if (!l) return;
    while (!this.held && this.head < this.queue.length) {
      const value = this.queue[this.head]!;
      this.queue[this.head++] = undefined as T;
      l.message(value);
    }
    this.drained();
    if (this.held || this.head < this.queue.length || this.settledOut) return;
    if (this.failure) {
      this.settledOut = true;
      this.listener = SETTLED;
      l.fail(this.failure);
    } else if (this.ended) {
      this.settledOut = true;
      this.listener = SETTLED;
      l.end();
    }
  }

  cancel(after?: PromiseLike<boolean>): void {
    if (this.ended || this.cancelled) return;
    this.cancelled = true;
    this.queue.length = 0;
    this.head = 0;
    this.fail(new ConnectError('stream cancelled by the client', Code.Canceled));
    const reset = () => this.reset();
    if (!after) {
      reset();
      return;
    }
    // Keep reading (and discarding) until the worker ends the stream, which it
    // does on the Abort rpc: many resets in a row trip servers' rapid-reset
    // guards (nghttp2 closes the connection after ~1000).
    this.detach();
    after.then((acked) => {
      if (!acked) reset();
      else if (!this.stream.closed) setTimeout(reset, ABORT_GRACE_MS).unref();
    }, reset);
  }

  detach(): void {
    this.detached = true;
    // Nothing more is delivered: let go of the consumer (Node may keep a closed stream, and
    // with it this object, for a while; the consumer holds the whole request).
    if (this.listener) this.listener = SETTLED;
    this.queue.length = 0;
    this.head = 0;
    if (this.paused) {
      this.paused = false;
      this.stream.resume();
    }
  }

  /** Reset the stream (RST_STREAM CANCEL) unless it is over. */
  private reset(): void {
    this.stream.cancel();
  }

  /** @internal The response headers (or a trailers-only response). */
  onHeaders(fields: string[], endStream: boolean): void {
    const status = Number(field(fields, ':status') ?? 0);
    if (status !== 200) {
      this.fail(new ConnectError(`HTTP ${status} from the worker`, codeFromHttpStatus(status)));
      return;
    }
    const ct = field(fields, 'content-type');
    // (Connect's gRPC content-type check; a +json response is not ours to decode.)
    // (The two usual values are taken as they are: Connect's parser is a RegExp match per response.)
    if (ct !== 'application/grpc' && ct !== 'application/grpc+proto' && parseContentType(ct ?? null)?.binary !== true) {
      this.fail(new ConnectError(`unexpected content-type ${JSON.stringify(String(ct ?? ''))} from the worker`, Code.Internal));
      return;
    }
    // Trailers-only response: the status rides on the headers.
    if (endStream || field(fields, 'grpc-status') !== undefined) this.onTrailers(fields);
  }

  /**
   * @internal The status of the call. An OK (the usual case) is read off the trailers
   * directly; any other goes through Connect's findTrailerError (grpc-status-details-bin,
   * code range, grpc-message decoding), with a malformed percent-encoding kept as sent.
   */
  onTrailers(fields: string[]): void {
    const code = field(fields, 'grpc-status');
    if (code === grpcStatusOk) {
      this.status = 0;
      return;
    }
    const headers = new Headers();
    for (const k of STATUS_TRAILERS) {
      const v = field(fields, k);
      if (v !== undefined) headers.set(k, v);
    }
    let err: ConnectError | undefined;
    try {
      err = findTrailerError(headers);
    } catch {
      // grpc-message is not valid percent-encoding (or details-bin is not a Status): keep it as sent.
      const n = Number(code);
      err = new ConnectError(field(fields, 'grpc-message') ?? '', Number.isInteger(n) && n > 0 && n <= 16 ? (n as Code) : Code.Unknown);
    }
    // No grpc-status at all: an unknown status, as gRPC clients report it.
    this.status = err ? err.code : code === undefined ? Code.Unknown : 0;
    this.statusMessage = err ? err.rawMessage : '';
  }

  /** @internal (the first-response deadline passed) */
  noAnswer(afterMs: number): void {
    this.firstDeadline = undefined;
    if (this.ended || this.failure || this.cancelled) return;
    this.cancelled = true;
    this.queue.length = 0;
    this.head = 0;
    this.fail(new FirstResponseTimeout(afterMs));
    this.reset();
  }

  private clearFirstDeadline(): void {
    const d = this.firstDeadline;
    if (d === undefined) return;
    d.list.cancel(d);
    this.firstDeadline = undefined;
  }

  /** @internal One DATA frame's payload, `d[start, end)`. */
  onData(d: Buffer, start: number, end: number): void {
    if (this.firstDeadline !== undefined) this.clearFirstDeadline();
    if (this.detached || this.failure) return;
    let buf = d;
    let off = start;
    let stop = end;
    if (this.pending) {
      buf = Buffer.concat([this.pending, d.subarray(start, end)]);
      off = 0;
      stop = buf.length;
      this.pending = undefined;
    }
    while (stop - off >= 5) {
      const flags = buf[off]!;
      const len = buf.readUInt32BE(off + 1);
      if (stop - off - 5 < len) break;
      if (flags & 1) {
        this.fail(new ConnectError('worker sent a compressed message without negotiating an encoding', Code.Internal));
        this.reset();
        return;
      }
      let msg: T;
      try {
        msg = this.decode(buf, off + 5, off + 5 + len);
      } catch (err) {
        this.fail(new ConnectError(`cannot decode a response message: ${String(err)}`, Code.Internal));
        this.reset();
        return;
      }
      off += 5 + len;
      this.push(msg);
      // (In push mode the consumer may have stopped the stream from inside push.)
      if (this.detached || this.failure) return;
    }
    if (off < stop) this.pending = Buffer.from(buf.subarray(off, stop));
    if (!this.paused && this.queue.length - this.head >= HIGH_WATER) {
      this.paused = true;
      this.stream.pause();
    }
  }

  private push(msg: T): void {
    const l = this.listener;
    if (l) {
      if (!this.held && this.head === this.queue.length) l.message(msg);
      else this.queue.push(msg);
      return;
    }
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.resolve({ value: msg, done: false });
    } else this.queue.push(msg);
  }

  /** @internal The stream is over: `err` when it failed (reset, connection lost, protocol error). */
  onClose(err: ConnectError | undefined): void {
    if (this.firstDeadline !== undefined) this.clearFirstDeadline();
    if (this.ended || this.failure) return;
    if (err) {
      this.fail(err);
      return;
    }
    if (this.status === undefined) {
      this.fail(new ConnectError('worker ended the stream without a grpc-status', Code.Internal));
      return;
    }
    if (this.status !== 0) {
      const ce = new ConnectError(this.statusMessage || `grpc-status ${this.status}`, this.status as Code);
      (ce as { workerStatus?: boolean }).workerStatus = true;
      this.fail(ce);
      return;
    }
    if (this.pending) {
      this.fail(new ConnectError('worker ended the stream inside a message', Code.Internal));
      return;
    }
    this.ended = true;
    if (this.listener) {
      this.flush();
      return;
    }
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.resolve({ value: undefined, done: true });
    }
  }

  /** @internal */
  fail(err: ConnectError): void {
    if (this.firstDeadline !== undefined) this.clearFirstDeadline();
    if (this.failure || this.ended) return;
    this.failure = err;
    if (this.listener) {
      this.flush();
      return;
    }
    // Queued messages are still delivered before the error.
    if (this.head < this.queue.length) return;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.reject(err);
    }
  }
}

/** This thread's first-response deadlines of `ms` (one list and one timer per duration). */
const firstResponse = new Map<number, FixedDeadlines<H2ServerStream<unknown>>>();
function firstResponseDeadlines(ms: number): FixedDeadlines<H2ServerStream<unknown>> {
  let l = firstResponse.get(ms);
  if (l === undefined) firstResponse.set(ms, (l = new FixedDeadlines(ms, (s) => s.noAnswer(ms))));
  return l;
}

/** The first value of header `name` in a flat [name, value, ...] list. */
function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** A ServerStream whose messages pass through `f` (called in order, once each). */
export function mapStream<A, B>(s: ServerStream<A>, f: (a: A) => B): ServerStream<B> {
  return {
    next: async () => {
      const r = await s.next();
      return r.done ? { value: undefined, done: true } : { value: f(r.value), done: false };
    },
    return: async () => {
      s.cancel();
      return { value: undefined, done: true };
    },
    cancel: (after) => s.cancel(after),
    detach: () => s.detach(),
    listen: s.listen
      ? (l) => s.listen!({ message: (m) => l.message(f(m)), end: () => l.end(), fail: (e) => l.fail(e) })
      : undefined,
    hold: s.hold ? () => s.hold!() : undefined,
    release: s.release ? () => s.release!() : undefined,
  };
}
