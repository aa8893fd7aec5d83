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
import { errorEvent as openaiErrorEvent } from '../protocol/error-wire.js';
import { SSE_DONE } from '../protocol/sse-frames.js';
import { log } from '../log.js';
import type { Exchange } from './exchange.js';
import { STOP, type RunningGeneration } from '../pipeline/run.js';

/** What a keep-alive writes: an SSE comment, ignored by every client. */
export const SSE_KEEP_ALIVE = ': keep-alive\n\n';

export interface StreamFormat<E> {
  /** Written once, before the first event (`first`: the event the stream is committed with, if any). */
  start(first?: E): string;
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
  /**
   * After a stream's first event, its events are written at most this often (ms): what the
   * engine sends in between goes out in one write, held at most this long (0: a write per
   * event-loop turn with output).
   */
  writeIntervalMs: number;
}

export const DEFAULT_STREAM_SETTINGS: StreamSettings = { peekMs: 1000, keepAliveMs: 10_000, stallMs: 60_000, writeIntervalMs: 0 };

let settings: StreamSettings = { ...DEFAULT_STREAM_SETTINGS };

/** Set by the frontend at startup (once per shard thread, from the serve flags). */
export function configureStreams(s: Partial<StreamSettings>): void {
  settings = {
    peekMs: s.peekMs ?? DEFAULT_STREAM_SETTINGS.peekMs,
    keepAliveMs: s.keepAliveMs ?? DEFAULT_STREAM_SETTINGS.keepAliveMs,
    stallMs: s.stallMs ?? DEFAULT_STREAM_SETTINGS.stallMs,
    writeIntervalMs: s.writeIntervalMs ?? DEFAULT_STREAM_SETTINGS.writeIntervalMs,
    peekConfigured: s.peekMs !== undefined && s.peekMs > 0,
  };
}

/** Whether a pre-commit peek was configured (see StreamSettings.peekConfigured). */
export function precommitPeekConfigured(): boolean {
  return settings.peekConfigured === true;
}

const STALLED = Symbol('stalled');

/**
 * Answer with an event stream of the events `run` hands to its sink (one generation, or
 * several merged). Every error this stream's client sees is written here: before the commit
 * a failure rejects (the HTTP layer writes it as the response's status); after it, it is
 * the stream's error event.
 */
export async function streamGeneration<E>(
  ex: Exchange,
  fmt: StreamFormat<E>,
  run: (sink: EventSink<E>) => Promise<void>,
  begin?: (g: RunningGeneration) => void,
  peekMs = settings.peekMs,
): Promise<void> {
  const sink = new SseSink(ex, fmt);
  sink.begin = begin;
  sink.arm(peekMs);
  try {
    await run(sink);
  } catch (err) {
    if (!sink.committed) {
      sink.disarm();
      throw err;
    }
    sink.disarm();
    if (sink.dropped || ex.cancellation.aborted) return;
    const e = ApiError.from(err);
    log.warn('stream ended by an error', { request_id: ex.requestId, status: e.status, error: e.message, detail: e.detail });
    await ex.writeEvent(errorEvent(fmt, e));
  }
  sink.disarm();
  if (sink.dropped || ex.cancellation.aborted) return;
  if (!sink.committed) {
    const p = sink.commit(undefined);
    if (p) await p;
  }
  const done = fmt.done ?? SSE_DONE;
  if (done) await ex.writeEvent(done);
  ex.endEventStream();
}

/** What streamGeneration's run hands its events to (a GenerationSink for the pipeline's events). */
export interface EventSink<E> {
  /** Passed on to runGeneration's sink (the caller's own hook). */
  begin?: (g: RunningGeneration) => void;
  event(ev: E): undefined | typeof STOP | Promise<undefined | typeof STOP>;
}

/**
 * The first event is awaited for the pre-commit window (arm); the 200 goes out with it, or
 * when the window passes (then keep-alive comments until the first event). Events are
 * formatted and queued on the exchange (written once per event-loop turn); a write the
 * socket does not take pauses the run; one not taken for the stall limit drops the reader.
 */
class SseSink<E> implements EventSink<E> {
  begin?: (g: RunningGeneration) => void;
  committed = false;
  dropped = false;
  /** The first event was written (later ones may be coalesced: writeIntervalMs). */
  private wroteFirst = false;
  private peek: ReturnType<typeof setTimeout> | undefined;
  private keepAlive: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly ex: Exchange,
    private readonly fmt: StreamFormat<E>,
  ) {}

  /** `peekMs`: this stream's pre-commit peek (the configured one unless the caller says). */
  arm(peekMs: number): void {
    if (peekMs <= 0) {
      void this.commit(undefined);
      return;
    }
    this.peek = setTimeout(() => {
      this.peek = undefined;
      if (this.committed) return;
      void this.commit(undefined);
      // Past the window: keep the connection visibly alive until the first event.
      const every = settings.keepAliveMs;
      if (every > 0) {
        this.keepAlive = setInterval(() => {
          // A keep-alive that the socket will not take is not retried: the stall limit covers that reader.
          if (!this.ex.cancellation.aborted) this.ex.writeEvent(SSE_KEEP_ALIVE);
        }, every);
      }
    }, peekMs);
  }

  disarm(): void {
    if (this.peek !== undefined) clearTimeout(this.peek);
    this.peek = undefined;
    if (this.keepAlive !== undefined) clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  /** Commit the 200 and write the head (`first`: the event it goes out with, if any). */
  commit(first: E | undefined): Promise<void> | undefined {
    this.committed = true;
    this.ex.startEventStream();
    const head = this.fmt.start(first);
    return head ? this.ex.writeEvent(head) : undefined;
  }

  event(ev: E): undefined | typeof STOP | Promise<undefined | typeof STOP> {
    if (this.dropped) return STOP;
    if (!this.committed || this.keepAlive !== undefined) {
      this.disarm();
      if (!this.committed) {
        const p = this.commit(ev);
        if (p) return p.then(() => this.write(ev));
      }
    }
    return this.write(ev);
  }

  private write(ev: E): undefined | typeof STOP | Promise<undefined | typeof STOP> {
    const text = this.fmt.event(ev);
    if (!text) return undefined;
    const p = this.ex.writeEvent(text);
    if (!this.wroteFirst) {
      // Queued after the first event: the first token goes out in the turn it was made.
      this.wroteFirst = true;
      if (settings.writeIntervalMs > 0) this.ex.coalesceEvents?.(settings.writeIntervalMs);
    }
    if (!p) return undefined;
    if (settings.stallMs <= 0) return p as Promise<undefined>;
    return within(p, settings.stallMs, STALLED).then((v) => {
      if (v !== STALLED) return undefined;
      this.drop();
      return STOP;
    });
  }

  /**
   * Give up on a reader that took nothing for the stall limit: stop the engine (the run
   * sees STOP) and close the connection. The final error event is written first, but a
   * socket that took nothing for that long still holds undelivered output, and closing
   * discards it: ending the response instead (so that the event would wait behind it) kept
   * the connection open indefinitely (measured: still open 40 s later), which is what
   * dropping must not do.
   */
  private drop(): void {
    const ex = this.ex;
    this.dropped = true;
    ex.model?.stats.stalledDrops.inc();
    log.warn('stream dropped: the client stopped reading', { request_id: ex.requestId, stall_ms: settings.stallMs });
    const e = new ApiError(408, `the client read nothing for ${settings.stallMs / 1000} s; the stream was dropped`, { code: 'stream_stalled' });
    void ex.writeEvent(errorEvent(this.fmt, e));
    if (ex.abortFromServer) ex.abortFromServer();
    else ex.endEventStream();
  }
}

/**
 * An event stream of `events` (an iterator's events through the same sink); `peekMs`: this
 * stream's pre-commit peek, when not the configured one.
 */
export async function streamEvents<E>(ex: Exchange, events: AsyncIterable<E>, fmt: StreamFormat<E>, peekMs = settings.peekMs): Promise<void> {
  await streamGeneration(ex, fmt, async (sink) => {
    const it = events[Symbol.asyncIterator]();
    for (let r = await it.next(); !r.done; r = await it.next()) {
      const w = sink.event(r.value);
      if (w !== undefined && (w instanceof Promise ? await w : w) === STOP) {
        void it.return?.()?.catch(() => undefined);
        return;
      }
    }
  }, undefined, peekMs);
}

function errorEvent<E>(fmt: StreamFormat<E>, e: ApiError): string {
  return fmt.error ? fmt.error(e) : openaiErrorEvent(e, 'openai');
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
