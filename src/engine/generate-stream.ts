// The Generate stream loop shared by every gRPC engine client whose
// GenerateResponse is a oneof of {chunk, complete} (SGLang's scheduler and
// vLLM's engine protocols both are). It maps wire messages to EngineEvents,
// turns caller aborts and transport failures into EngineErrors, and tells
// the worker to drop a request the caller stopped reading.

import { ConnectError } from '@connectrpc/connect';

import { EngineError } from './errors.js';
import { isFirstResponseTimeout, isWorkerStatus, pumpStream, type ServerStream, type StreamListener } from './grpc-h2.js';
import type { Cancellation, EngineEvent, GenerateDone, GenerateParams, TokenLogprobs } from './types.js';

/** OutputLogProbs of both protocols (SGLang's has an extra field, unused here). */
export interface WireLogprobs {
  tokenLogprobs: number[];
  topLogprobs: Array<{ values: number[]; tokenIds: number[] }>;
}

/** InputLogProbs of both protocols: the first prompt token's value is unset. */
export interface WireInputLogprobs {
  tokenLogprobs: Array<{ value?: number }>;
  topLogprobs: Array<{ values: number[]; tokenIds: number[] }>;
}

export interface WireChunk {
  tokenIds: number[];
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  index: number;
  outputLogprobs?: WireLogprobs;
  inputLogprobs?: WireInputLogprobs;
}

export interface WireComplete {
  outputIds: number[];
  finishReason: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  index: number;
  outputLogprobs?: WireLogprobs;
  matchedStop:
    | { case: 'matchedTokenId'; value: number }
    | { case: 'matchedStopStr'; value: string }
    | { case: undefined; value?: undefined };
  /** vLLM: GenerateComplete.kv_transfer_params_json (absent: not set). */
  kvTransferParamsJson?: string;
  /** vLLM: the legacy typed GenerateComplete.kv_transfer_params. */
  kvTransferParams?: { remoteHost: string; remotePort: number };
}

export interface WireResponse {
  response:
    | { case: 'chunk'; value: WireChunk }
    | { case: 'complete'; value: WireComplete }
    | { case: undefined; value?: undefined };
}

const ONCE: AddEventListenerOptions = { once: true };

/** Where a pushed engine stream (EngineEvents.pipe) hands its events. */
export interface EngineEventHandler {
  event(ev: EngineEvent): void;
  /** Every choice completed and the stream ended. */
  end(): void;
  /** The stream failed (an EngineError), or could not be opened. */
  fail(err: unknown): void;
}

/** An engine stream that can push its events (pipe) as well as be read with next(). */
export interface EngineEvents extends AsyncIterableIterator<EngineEvent> {
  pipe(h: EngineEventHandler): void;
  hold(): void;
  release(): void;
  /** Leave the stream (aborting it unless every choice completed; see close()). */
  return(): Promise<IteratorResult<EngineEvent>>;
  /**
   * The reader has every choice it needs: what follows is only read out, and a failure now
   * costs the client nothing (a stream that would act on a failure, as a migrating one
   * does, stops acting).
   */
  settle?(): void;
  /**
   * The reader has choice `index` whole before the engine ended it (Portico applied a stop
   * string, a stop token or the token limit): a stream that would go on with it after a
   * failure (a migrating one) leaves it out.
   */
  settleChoice?(index: number): void;
}

/** Whether `s` (what EngineClient.generate returned) can push its events. */
export function isEngineEvents(s: AsyncIterable<EngineEvent>): s is EngineEvents {
  return typeof (s as Partial<EngineEvents>).pipe === 'function';
}

export function generateStream(
  url: string,
  p: GenerateParams,
  signal: Cancellation,
  open: () => ServerStream<WireResponse>,
  abort: (requestId: string, reason: string) => Promise<void>,
): EngineEvents {
  return new GenerateEvents(url, p, signal, open, abort);
}

/**
 * The loop of generateStream as a plain iterator rather than an async generator: a
 * generator layer cost several promise jobs per message, this costs one await (none of its
 * own when a message is already buffered beyond the wire's). Opens the stream on the first
 * read, as a generator's body would.
 */
class GenerateEvents implements EngineEvents {
  private readonly n: number;
  private wire: ServerStream<WireResponse> | null = null;
  /** Every choice is complete. */
  private finished = false;
  /** Resolves true when the worker answered the Abort rpc. */
  private abortCall: Promise<boolean> | undefined;
  /** Choices seen complete; a bit set is enough for the usual n = 1. */
  private doneCount = 0;
  private readonly doneIdx: Set<number> | undefined;
  private workerGone = false;
  private streamEnded = false;
  /** Over: ended, failed or returned (later reads answer done). */
  private closed = false;
  private readonly onAbort = () => {
    if (this.finished) return;
    // The stream is reset once the Abort rpc is answered, unless the worker
    // ended it first (then no RST_STREAM at all).
    this.wire!.cancel(this.sendAbort('client disconnected'));
  };

  constructor(
    private readonly url: string,
    private readonly p: GenerateParams,
    private readonly signal: Cancellation,
    private readonly open: () => ServerStream<WireResponse>,
    private readonly abort: (requestId: string, reason: string) => Promise<void>,
  ) {
    this.n = p.n === undefined || p.n <= 1 ? 1 : p.n;
    this.doneIdx = this.n === 1 ? undefined : new Set<number>();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private sendAbort(reason: string): Promise<boolean> {
    return (this.abortCall ??= this.abort(this.p.requestId, reason).then(() => true, () => false));
  }

  async next(): Promise<IteratorResult<EngineEvent>> {
    if (this.closed) return DONE;
    const p = this.p;
    let wire = this.wire;
    if (!wire) {
      if (this.signal.aborted) {
        this.closed = true;
        throw new EngineError('aborted', `request ${p.requestId} aborted before it was sent to ${this.url}`, this.url);
      }
      try {
        wire = this.wire = this.open();
      } catch (err) {
        this.closed = true;
        throw err;
      }
      this.signal.addEventListener('abort', this.onAbort, ONCE);
    }
    try {
      for (;;) {
        const step = await wire.next();
        if (step.done) {
          this.streamEnded = true;
          break;
        }
        const ev = this.toEvent(step.value);
        if (ev) return { value: ev, done: false };
      }
    } catch (err) {
      const e = this.failure(err);
      this.close();
      throw e;
    }
    // The stream ended.
    this.close();
    const e = this.ended();
    if (e) throw e;
    return DONE;
  }

  /** One wire message as an event (null: an empty chunk of a unary request, skipped). */
  private toEvent(res: WireResponse): EngineEvent | null {
    const p = this.p;
    const r = res.response;
    if (r.case === 'chunk') {
      const c = r.value;
      if (c.tokenIds.length === 0 && !p.stream) return null;
      const chunk: EngineEvent & { kind: 'chunk' } = {
        kind: 'chunk',
        chunk: {
          tokenIds: c.tokenIds,
          promptTokens: c.promptTokens,
          completionTokens: c.completionTokens,
          cachedTokens: c.cachedTokens,
          index: c.index,
        },
      };
      if (p.logprobs === true) chunk.chunk.logprobs = toLogprobs(c.outputLogprobs, c.tokenIds.length);
      if (p.promptLogprobs !== undefined && c.inputLogprobs && c.inputLogprobs.tokenLogprobs.length > 0) {
        chunk.chunk.promptLogprobs = toLogprobs(
          { tokenLogprobs: c.inputLogprobs.tokenLogprobs.map((v) => v.value ?? NaN), topLogprobs: c.inputLogprobs.topLogprobs },
          c.inputLogprobs.tokenLogprobs.length,
        );
      }
      return chunk;
    }
    if (r.case === 'complete') {
      // vLLM ends a request that failed inside the engine (a KV hand-off that never came, a
      // load failure) with a normal completion whose reason is "error"; its own HTTP server
      // answers that with a 500. It is the worker's failure, not an answer.
      if (r.value.finishReason === 'error') {
        throw new EngineError('internal', `engine worker ${this.url} ended request ${p.requestId} with finish_reason "error"`, this.url, { engineMessage: 'finish_reason error', health: 'strike', requestId: p.requestId });
      }
      if (this.doneIdx) {
        this.doneIdx.add(r.value.index);
        this.doneCount = this.doneIdx.size;
      } else this.doneCount = 1;
      if (this.doneCount >= this.n) this.finished = true;
      const done = toDone(r.value, p.stream);
      if (p.logprobs === true && !p.stream) done.logprobs = toLogprobs(r.value.outputLogprobs, done.outputIds.length);
      return { kind: 'done', done };
    }
    return null;
  }

  /** The stream ended without a failure: the error when a choice is still missing, else null. */
  private ended(): EngineError | null {
    if (this.finished) return null;
    const id = this.p.requestId;
    if (this.signal.aborted) return new EngineError('aborted', `request ${id} on ${this.url} aborted by caller`, this.url);
    return new EngineError('internal', `engine worker ${this.url} ended the stream of request ${id} after ${this.doneCount}/${this.n} completions`, this.url);
  }

  /**
   * Push mode (instead of next()): opens the stream and hands every event, then the end or
   * the failure (an EngineError, or what opening threw), to `h` as the wire delivers them.
   * hold() / release() pause and resume the delivery; return() leaves as it does for next().
   */
  pipe(h: EngineEventHandler): void {
    const p = this.p;
    if (this.signal.aborted) {
      this.closed = true;
      h.fail(new EngineError('aborted', `request ${p.requestId} aborted before it was sent to ${this.url}`, this.url));
      return;
    }
    let wire: ServerStream<WireResponse>;
    try {
      wire = this.wire = this.open();
    } catch (err) {
      this.closed = true;
      h.fail(err);
      return;
    }
    this.signal.addEventListener('abort', this.onAbort, ONCE);
    const l: StreamListener<WireResponse> = {
      message: (m) => {
        if (this.closed) return;
        let ev: EngineEvent | null;
        try {
          ev = this.toEvent(m);
        } catch (err) {
          l.fail(err);
          return;
        }
        if (ev) h.event(ev);
      },
      end: () => {
        if (this.closed) return;
        this.streamEnded = true;
        this.close();
        const e = this.ended();
        if (e) h.fail(e);
        else h.end();
      },
      fail: (err) => {
        if (this.closed) return;
        const e = this.failure(err);
        this.close();
        h.fail(e);
      },
    };
    if (wire.listen) {
      wire.listen(l);
      this.holder = wire as Required<Pick<ServerStream<WireResponse>, 'hold' | 'release'>>;
    } else this.holder = pumpStream(wire, l);
  }

  private holder: { hold(): void; release(): void } | undefined;

  hold(): void {
    this.holder?.hold();
  }

  release(): void {
    this.holder?.release();
  }

  async return(): Promise<IteratorResult<EngineEvent>> {
    if (!this.closed) {
      if (this.wire) this.close();
      else this.closed = true;
    }
    return DONE;
  }

  /** A failure of the stream as an EngineError (and whether the worker is gone). */
  private failure(err: unknown): EngineError {
    const { url } = this;
    const id = this.p.requestId;
    // The worker ended the call with its own status: nothing is left to abort or reset.
    if (isWorkerStatus(err)) this.streamEnded = true;
    if (this.signal.aborted) {
      return new EngineError('aborted', `request ${id} on ${url} aborted by caller`, url, { cause: err });
    }
    if (isFirstResponseTimeout(err)) {
      this.workerGone = true;
      return new EngineError('timeout', `engine worker ${url} sent no response to Generate(${id}) within ${err.afterMs} ms`, url, { cause: err, health: 'down' });
    }
    let e = EngineError.from(err, url, `Generate(${id})`, id);
    if (e.code === 'unavailable' && isWorkerStatus(err)) {
      // The worker answered UNAVAILABLE itself (draining, a rank restarting): its connection
      // is fine, so this is a strike for the breaker; its health check says the rest.
      e = new EngineError('unavailable', e.message, url, { cause: err, engineMessage: e.engineMessage, health: 'strike', requestId: id });
    }
    this.workerGone = e.code === 'unavailable' || e.code === 'aborted' || e.code === 'timeout';
    if (e.code === 'aborted') {
      // We did not cancel, so the worker (or the network) reset this one stream (e.g. an
      // HTTP/2 ENHANCE_YOUR_CALM for one oversized request): the client sees the worker as
      // unavailable, but one reset is a strike for the pool's breaker, not a dead worker.
      const why = ConnectError.from(err).rawMessage;
      return new EngineError('unavailable', `stream of request ${id} was reset by engine worker ${url} (${why})`, url, { cause: err, engineMessage: why, health: 'strike', requestId: id });
    }
    return e;
  }

  /** What the generator's finally did: stop listening for aborts, and settle the stream. */
  private close(): void {
    this.closed = true;
    this.signal.removeEventListener('abort', this.onAbort);
    if (this.streamEnded) return;
    if (this.finished) {
      // Every choice is complete; only the trailers are still on the way.
      // Resetting the stream here would send an RST_STREAM per request,
      // and servers treat a flood of those as an attack (nghttp2 answers
      // GOAWAY INTERNAL_ERROR after ~1000), so read it to its end instead.
      this.wire!.detach();
    } else {
      // Consumer stopped early or the stream failed: free the worker's slot
      // (pointless when the worker is unreachable).
      this.wire!.cancel(this.workerGone ? undefined : this.sendAbort('stream closed early'));
    }
  }
}

const DONE: IteratorResult<EngineEvent> = Object.freeze({ value: undefined, done: true }) as IteratorResult<EngineEvent>;

/**
 * A Connect client's server stream as a ServerStream: cancel() aborts the
 * call, detach() reads the rest in the background without delivering it.
 */
export function fromConnectStream<T>(call: (signal: AbortSignal) => AsyncIterable<T>): ServerStream<T> {
  const ac = new AbortController();
  const it = call(ac.signal)[Symbol.asyncIterator]();
  return {
    next: () => it.next(),
    return: async () => {
      ac.abort();
      return { value: undefined, done: true };
    },
    // Connect's iterator only settles once aborted: reset at once.
    cancel: () => ac.abort(),
    detach: () => {
      void (async () => {
        try {
          while (!(await it.next()).done);
        } catch {
          // The stream's outcome no longer matters to anyone.
        }
      })();
    },
  };
}

/**
 * In stream mode the tokens came in chunks; complete.output_ids is ignored
 * (SGLang repeats the last chunk there, vLLM leaves it empty). Exported for its test.
 */
export function toDone(c: WireComplete, stream: boolean): GenerateDone {
  const done: GenerateDone = {
    finishReason: c.finishReason || 'stop',
    promptTokens: c.promptTokens,
    completionTokens: c.completionTokens,
    cachedTokens: c.cachedTokens,
    index: c.index,
    outputIds: stream ? [] : c.outputIds,
  };
  if (c.matchedStop.case === 'matchedTokenId') done.matchedTokenId = c.matchedStop.value;
  else if (c.matchedStop.case === 'matchedStopStr') done.matchedStopStr = c.matchedStop.value;
  // The JSON field wins; the legacy typed one (what an older servicer sets) reads as the JSON it stands for.
  if (c.kvTransferParamsJson !== undefined) done.kvTransferParams = c.kvTransferParamsJson;
  else if (c.kvTransferParams) done.kvTransferParams = JSON.stringify({ remote_host: c.kvTransferParams.remoteHost, remote_port: c.kvTransferParams.remotePort });
  return done;
}

/**
 * A position's top alternatives, most likely first. SGLang sends them so; vLLM's servicer
 * sends its logprob dict in insertion order, the sampled token first and then the best
 * (which is why the vLLM client asks for one more than the client wants: the k best are
 * then always among them, and the response keeps the first k of this order).
 */
export function bestFirst(tokenIds: number[], values: number[]): { tokenIds: number[]; logprobs: number[] } {
  let sorted = true;
  for (let j = 1; j < values.length && sorted; j++) sorted = values[j - 1]! >= values[j]!;
  if (sorted) return { tokenIds, logprobs: values };
  const order = values.map((_, j) => j).sort((a, b) => values[b]! - values[a]!);
  return { tokenIds: order.map((j) => tokenIds[j]!), logprobs: order.map((j) => values[j]!) };
}

/**
 * Wire logprobs → TokenLogprobs with exactly `count` entries. Positions the
 * engine left out read -9999, the value vLLM writes for -inf in JSON.
 */
function toLogprobs(w: WireLogprobs | undefined, count: number): TokenLogprobs {
  const logprobs = new Array<number>(count);
  for (let i = 0; i < count; i++) logprobs[i] = w?.tokenLogprobs[i] ?? -9999;
  const out: TokenLogprobs = { logprobs };
  if (w && w.topLogprobs.length > 0) {
    const top = new Array<{ tokenIds: number[]; logprobs: number[] }>(count);
    for (let i = 0; i < count; i++) {
      const t = w.topLogprobs[i];
      top[i] = t ? bestFirst(t.tokenIds, t.values) : { tokenIds: [], logprobs: [] };
    }
    out.top = top;
  }
  return out;
}
