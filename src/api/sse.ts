// Writing an OpenAI-style event stream from output events. The first engine event is
// awaited for a short pre-commit window before the 200 is committed, so a worker that
// fails at once still gets a proper error status (Dynamo's pre-commit error peek); past
// the window the headers go out and SSE comments keep the connection alive until the
// first event (a long prefill must not look like a dead server to proxies and clients).
// Slow readers pause the producer; one that takes no data for the stall limit is dropped
// (a final error event where the socket still takes it, counted in
// stalled_streams_dropped_total). An error after the stream started becomes an error
// event, and the stream ends with `data: [DONE]`.

import { ApiError } from '../protocol/errors.js';
import { log } from '../log.js';
import type { Exchange } from './exchange.js';

export const SSE_DONE = 'data: [DONE]\n\n';

/** What a keep-alive writes: an SSE comment, ignored by every client. */
export const SSE_KEEP_ALIVE = ': keep-alive\n\n';

export interface StreamFormat<E> {
  /** Written once, before the first event. */
  start(): string;
  /** The SSE text for one event ('' to write nothing). */
  event(ev: E): string;
  /** The SSE text for an error after the stream started. */
  error?(err: ApiError): string;
  /** The closing text. Default: `data: [DONE]`. */
  done?: string;
}

export interface StreamSettings {
  /** How long the first event is awaited before the 200 is committed (ms; 0: commit at once). */
  peekMs: number;
  /** After the commit, an SSE comment this often until the first event (ms; 0: none). */
  keepAliveMs: number;
  /** A reader that takes no data for this long is dropped (ms; 0: never). */
  stallMs: number;
  /**
   * The peek was configured (the flag, or PORTICO_/DYN_HTTP_PRE_COMMIT_ERROR_PEEK_MS), not
   * defaulted: custom chat processors' streams peek only then (spec 002), native ones always.
   */
  peekConfigured?: boolean;
}

export const DEFAULT_STREAM_SETTINGS: StreamSettings = { peekMs: 1000, keepAliveMs: 10_000, stallMs: 60_000 };

let settings: StreamSettings = { ...DEFAULT_STREAM_SETTINGS };

/** Set by the frontend at startup (once per shard thread, from the serve flags). */
export function configureStreams(s: Partial<StreamSettings>): void {
  settings = {
    peekMs: s.peekMs ?? DEFAULT_STREAM_SETTINGS.peekMs,
    keepAliveMs: s.keepAliveMs ?? DEFAULT_STREAM_SETTINGS.keepAliveMs,
    stallMs: s.stallMs ?? DEFAULT_STREAM_SETTINGS.stallMs,
    peekConfigured: s.peekMs !== undefined && s.peekMs > 0,
  };
}

/** Whether a pre-commit peek was configured (see StreamSettings.peekConfigured). */
export function precommitPeekConfigured(): boolean {
  return settings.peekConfigured === true;
}

const PEEK_TIMEOUT = Symbol('peek timeout');
const STALLED = Symbol('stalled');

/** `peekMs`: this stream's pre-commit peek, when not the configured one. */
export async function streamEvents<E>(ex: Exchange, events: AsyncIterable<E>, fmt: StreamFormat<E>, peekMs = settings.peekMs): Promise<void> {
  const it = events[Symbol.asyncIterator]();
  const pending = it.next();
  // Settles unobserved while the head is written (no peek): not an unhandled rejection.
  pending.catch(() => undefined);
  // Before the commit a failure rejects here and becomes the response's status.
  const peeked = peekMs > 0 ? await within(pending, peekMs, PEEK_TIMEOUT) : PEEK_TIMEOUT;
  ex.startEventStream();
  const head = fmt.start();
  if (head) await ex.writeEvent(head);
  try {
    let first = peeked;
    if (first === PEEK_TIMEOUT) first = await keepAliveUntil(ex, pending);
    for (let r = first; !r.done; r = await it.next()) {
      const text = fmt.event(r.value);
      if (text) {
        const p = ex.writeEvent(text);
        if (p && (settings.stallMs > 0 ? await within(p, settings.stallMs, STALLED) : await p) === STALLED) {
          dropStalled(ex, it, fmt);
          return;
        }
      }
    }
  } catch (err) {
    if (ex.cancellation.aborted) return;
    const e = ApiError.from(err);
    log.warn('stream ended by an error', { request_id: ex.requestId, status: e.status, error: e.message, detail: e.detail });
    await ex.writeEvent(errorEvent(fmt, e));
  }
  if (ex.cancellation.aborted) return;
  const done = fmt.done ?? SSE_DONE;
  if (done) await ex.writeEvent(done);
  ex.endEventStream();
}

function errorEvent<E>(fmt: StreamFormat<E>, e: ApiError): string {
  return fmt.error ? fmt.error(e) : `event: error\ndata: ${JSON.stringify(e.toOpenAI())}\n\n`;
}

/** `p`'s value, or `timeout` when it has not settled within `ms` (a rejection passes through). */
function within<T, S extends symbol>(p: Promise<T>, ms: number, timeout: S): Promise<T | S> {
  return new Promise<T | S>((resolve, reject) => {
    const t = setTimeout(resolve, ms, timeout);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(t);
        reject(err);
      },
    );
  });
}

/** Awaits the first event with the headers already sent, writing an SSE comment every keepAliveMs meanwhile. */
async function keepAliveUntil<T>(ex: Exchange, first: Promise<T>): Promise<T> {
  const every = settings.keepAliveMs;
  if (every <= 0) return first;
  const timer = setInterval(() => {
    // A keep-alive that the socket will not take is not retried: the stall limit covers that reader.
    if (!ex.cancellation.aborted) ex.writeEvent(SSE_KEEP_ALIVE);
  }, every);
  try {
    return await first;
  } finally {
    clearInterval(timer);
  }
}

/**
 * Give up on a reader that took nothing for the stall limit: stop the engine and close the
 * connection. The final error event is written first, but a socket that took nothing for
 * that long still holds undelivered output, and closing discards it: ending the response
 * instead (so that the event would wait behind it) kept the connection open indefinitely
 * (measured: still open 40 s later), which is what dropping must not do.
 */
function dropStalled<E>(ex: Exchange, it: AsyncIterator<E>, fmt: StreamFormat<E>): void {
  ex.model?.stats.stalledDrops.inc();
  log.warn('stream dropped: the client stopped reading', { request_id: ex.requestId, stall_ms: settings.stallMs });
  void it.return?.()?.catch(() => undefined);
  const e = new ApiError(408, `the client read nothing for ${settings.stallMs / 1000} s; the stream was dropped`, { code: 'stream_stalled' });
  void ex.writeEvent(errorEvent(fmt, e));
  if (ex.abortFromServer) ex.abortFromServer();
  else ex.endEventStream();
}
