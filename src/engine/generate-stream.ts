// The Generate stream loop shared by every gRPC engine client whose
// GenerateResponse is a oneof of {chunk, complete} (SGLang's scheduler and
// vLLM's engine protocols both are). It maps wire messages to EngineEvents,
// turns caller aborts and transport failures into EngineErrors, and tells
// the worker to drop a request the caller stopped reading.

import { ConnectError } from '@connectrpc/connect';

import { EngineError } from './errors.js';
import type { ServerStream } from './grpc-h2.js';
import type { EngineEvent, GenerateDone, GenerateParams, TokenLogprobs } from './types.js';

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
}

export interface WireResponse {
  response:
    | { case: 'chunk'; value: WireChunk }
    | { case: 'complete'; value: WireComplete }
    | { case: undefined; value?: undefined };
}

const ONCE: AddEventListenerOptions = { once: true };

export async function* generateStream(
  url: string,
  p: GenerateParams,
  signal: AbortSignal,
  open: () => ServerStream<WireResponse>,
  abort: (requestId: string, reason: string) => Promise<void>,
): AsyncGenerator<EngineEvent> {
  const id = p.requestId;
  if (signal.aborted) {
    throw new EngineError('aborted', `request ${id} aborted before it was sent to ${url}`, url);
  }
  const n = p.n === undefined || p.n <= 1 ? 1 : p.n;
  let finished = false;
  // Resolves true when the worker answered the Abort rpc.
  let abortCall: Promise<boolean> | undefined;
  const sendAbort = (reason: string): Promise<boolean> =>
    (abortCall ??= abort(id, reason).then(() => true, () => false));
  const wire = open();
  const onAbort = () => {
    if (finished) return;
    // The stream is reset once the Abort rpc is answered, unless the worker
    // ended it first (then no RST_STREAM at all).
    wire.cancel(sendAbort('client disconnected'));
  };
  signal.addEventListener('abort', onAbort, ONCE);

  // Choices seen complete; a bit set is enough for the usual n = 1.
  let doneCount = 0;
  const doneIdx = n === 1 ? undefined : new Set<number>();
  let workerGone = false;
  let streamEnded = false;
  try {
    for (;;) {
      const step = await wire.next();
      if (step.done) {
        streamEnded = true;
        break;
      }
      const r = step.value.response;
      if (r.case === 'chunk') {
        const c = r.value;
        if (c.tokenIds.length === 0 && !p.stream) continue;
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
        yield chunk;
      } else if (r.case === 'complete') {
        if (doneIdx) {
          doneIdx.add(r.value.index);
          doneCount = doneIdx.size;
        } else doneCount = 1;
        if (doneCount >= n) finished = true;
        const done = toDone(r.value, p.stream);
        if (p.logprobs === true && !p.stream) done.logprobs = toLogprobs(r.value.outputLogprobs, done.outputIds.length);
        yield { kind: 'done', done };
      }
    }
  } catch (err) {
    if (signal.aborted) {
      throw new EngineError('aborted', `request ${id} on ${url} aborted by caller`, url, { cause: err });
    }
    const e = EngineError.from(err, url, `Generate(${id})`);
    workerGone = e.code === 'unavailable' || e.code === 'aborted' || e.code === 'timeout';
    if (e.code === 'aborted') {
      // We did not cancel, so the worker (or the network) reset the stream.
      const why = ConnectError.from(err).rawMessage;
      throw new EngineError('unavailable', `stream of request ${id} was reset by engine worker ${url} (${why})`, url, { cause: err });
    }
    throw e;
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (!streamEnded) {
      if (finished) {
        // Every choice is complete; only the trailers are still on the way.
        // Resetting the stream here would send an RST_STREAM per request,
        // and servers treat a flood of those as an attack (nghttp2 answers
        // GOAWAY INTERNAL_ERROR after ~1000), so read it to its end instead.
        wire.detach();
      } else {
        // Consumer stopped early or the stream failed: free the worker's slot
        // (pointless when the worker is unreachable).
        wire.cancel(workerGone ? undefined : sendAbort('stream closed early'));
      }
    }
  }
  if (!finished) {
    if (signal.aborted) {
      throw new EngineError('aborted', `request ${id} on ${url} aborted by caller`, url);
    }
    throw new EngineError('internal', `engine worker ${url} ended the stream of request ${id} after ${doneCount}/${n} completions`, url);
  }
}

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
 * (SGLang repeats the last chunk there, vLLM leaves it empty).
 */
function toDone(c: WireComplete, stream: boolean): GenerateDone {
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
  return done;
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
      top[i] = t ? { tokenIds: t.tokenIds, logprobs: t.values } : { tokenIds: [], logprobs: [] };
    }
    out.top = top;
  }
  return out;
}
