// A processor's chunk stream with its failures mapped (errors.ts) and logged: what every
// endpoint adapter iterates. Whatever the engine's generate() throws, synchronously or
// while iterating, reaches Portico as an ApiError with the client-facing status.

import { log } from '../log.js';
import { ApiError } from '../protocol/errors.js';
import type { ChatCompletionChunk, ChatCompletionRequest, ChatEngine } from './contract.js';
import { processorFailure } from './errors.js';
import type { ProcessorContext } from './request-context.js';

function mapped(err: unknown, ctx: ProcessorContext): ApiError {
  const e = processorFailure(err);
  // (A request whose client went away fails by design: nothing to log.)
  if (!(err instanceof ApiError) && !ctx.ex.cancellation.aborted) log.warn('chat processor raised', { request_id: ctx.id, status: e.status, error: e.message, detail: e.detail });
  return e;
}

export async function* guardedChunks(engine: ChatEngine, request: ChatCompletionRequest, ctx: ProcessorContext): AsyncGenerator<ChatCompletionChunk> {
  let it: AsyncIterator<ChatCompletionChunk>;
  try {
    it = engine.generate(request, ctx)[Symbol.asyncIterator]();
  } catch (err) {
    throw mapped(err, ctx);
  }
  try {
    for (;;) {
      let r: IteratorResult<ChatCompletionChunk>;
      try {
        r = await it.next();
      } catch (err) {
        throw mapped(err, ctx);
      }
      if (r.done) return;
      yield r.value;
    }
  } finally {
    // The client went away or Portico stopped reading: end the processor's generator too.
    void it.return?.()?.catch?.(() => undefined);
  }
}
