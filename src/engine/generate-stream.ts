// The Generate stream loop shared by every gRPC engine client whose
// GenerateResponse is a oneof of {chunk, complete} (SGLang's scheduler and
// vLLM's engine protocols both are). It maps wire messages to EngineEvents,
// turns caller aborts and transport failures into EngineErrors, and tells
// the worker to drop a request the caller stopped reading.

import { ConnectError } from '@connectrpc/connect';

import { EngineError } from './errors.js';
import type { EngineEvent, GenerateDone, GenerateParams } from './types.js';

export interface WireChunk {
  tokenIds: number[];
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  index: number;
}

export interface WireComplete {
  outputIds: number[];
  finishReason: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  index: number;
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

export async function* generateStream(
  url: string,
  p: GenerateParams,
  signal: AbortSignal,
  open: (cancel: AbortSignal) => AsyncIterable<WireResponse>,
  abort: (requestId: string, reason: string) => Promise<void>,
): AsyncGenerator<EngineEvent> {
  const id = p.requestId;
  if (signal.aborted) {
    throw new EngineError('aborted', `request ${id} aborted before it was sent to ${url}`, url);
  }
  const n = Math.max(1, p.n ?? 1);
  const cancel = new AbortController();
  let finished = false;
  let abortSent = false;
  const sendAbort = (reason: string) => {
    if (abortSent) return;
    abortSent = true;
    abort(id, reason).catch(() => {
      // Worker gone or request already over: nothing left to stop.
    });
  };
  const onAbort = () => {
    sendAbort('client disconnected');
    cancel.abort();
  };
  signal.addEventListener('abort', onAbort, { once: true });

  const doneIdx = new Set<number>();
  let workerGone = false;
  try {
    for await (const res of open(cancel.signal)) {
      const r = res.response;
      if (r.case === 'chunk') {
        const c = r.value;
        if (c.tokenIds.length === 0 && !p.stream) continue;
        yield {
          kind: 'chunk',
          chunk: {
            tokenIds: c.tokenIds,
            promptTokens: c.promptTokens,
            completionTokens: c.completionTokens,
            cachedTokens: c.cachedTokens,
            index: c.index,
          },
        };
      } else if (r.case === 'complete') {
        doneIdx.add(r.value.index);
        if (doneIdx.size >= n) finished = true;
        yield { kind: 'done', done: toDone(r.value, p.stream) };
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
    if (!finished) {
      // Consumer stopped early or the stream failed: free the worker's slot
      // (pointless when the worker is unreachable).
      if (!workerGone) sendAbort('stream closed early');
      cancel.abort();
    }
  }
  if (!finished) {
    if (signal.aborted) {
      throw new EngineError('aborted', `request ${id} on ${url} aborted by caller`, url);
    }
    throw new EngineError('internal', `engine worker ${url} ended the stream of request ${id} after ${doneIdx.size}/${n} completions`, url);
  }
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
