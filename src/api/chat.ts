// POST /v1/chat/completions: read and validate, tokenize natively, pick a worker,
// generate over gRPC, and answer as one JSON body or as an SSE stream.

import { randomUUID } from 'node:crypto';
import { ApiError } from '../protocol/errors.js';
import { readChatRequest, type ChatRequest } from '../protocol/chat-request.js';
import { ChatChunkWriter, chatCompletion, sseError, SSE_DONE, usageOf } from '../protocol/chat-response.js';
import { tokenizeChat, completionBudget } from '../pipeline/preprocess.js';
import { ChoiceDecoder, finishReasonOf } from '../pipeline/postprocess.js';
import { generate, type Generation } from '../pipeline/generate.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { modelFor, type AppContext } from './context.js';
import type { Exchange } from './exchange.js';

export function chatCompletions(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const req = readChatRequest(ex.body, ctx.ignoreUnsupportedFields);
    const model = modelFor(ctx, req.model);
    const promptIds = await tokenizeChat(model, ex.body, req);
    const maxTokens = completionBudget(model, promptIds.length, req.sampling.maxTokens);
    const gen = generate(model, promptIds, { ...req.sampling, maxTokens }, ex.requestId, ex.signal);
    const id = `chatcmpl-${randomUUID().replaceAll('-', '')}`;
    const created = Math.floor(Date.now() / 1000);
    if (req.stream) await streamChat(ex, model, req, gen, id, created);
    else await unaryChat(ex, model, req, gen, id, created);
  };
}

async function unaryChat(ex: Exchange, model: ServedModel, req: ChatRequest, gen: Generation, id: string, created: number) {
  const decoder = new ChoiceDecoder(model, req.skipSpecialTokens);
  let text = '';
  for await (const ev of gen.events) {
    if (ev.kind === 'chunk') {
      text += decoder.push(ev.chunk.tokenIds);
      continue;
    }
    text += decoder.finish();
    const d = ev.done;
    const usage = usageOf(d.promptTokens, decoder.completionTokens, d.cachedTokens);
    ex.sendJson(200, chatCompletion(id, req.model, created, text, finishReasonOf(d.finishReason), usage));
    return;
  }
  throw new ApiError(502, 'the engine ended the stream without finishing the request', { code: 'engine_error' });
}

async function streamChat(ex: Exchange, model: ServedModel, req: ChatRequest, gen: Generation, id: string, created: number) {
  // Wait for the first engine event before committing to a 200, so that a worker that
  // fails at once still gets a proper error status.
  const it = gen.events[Symbol.asyncIterator]();
  const first = await it.next();
  const w = new ChatChunkWriter(id, req.model, created);
  const decoder = new ChoiceDecoder(model, req.skipSpecialTokens);
  ex.startEventStream();
  await ex.writeEvent(w.role(0));
  try {
    for (let r = first; !r.done; r = await it.next()) {
      const ev = r.value;
      if (ev.kind === 'chunk') {
        const text = decoder.push(ev.chunk.tokenIds);
        if (text) {
          const p = ex.writeEvent(w.content(0, text));
          if (p) await p;
        }
        continue;
      }
      const tail = decoder.finish();
      if (tail) await ex.writeEvent(w.content(0, tail));
      const d = ev.done;
      const usage = usageOf(d.promptTokens, decoder.completionTokens, d.cachedTokens);
      await ex.writeEvent(w.finish(0, finishReasonOf(d.finishReason), null));
      if (req.includeUsage) await ex.writeEvent(w.usage(usage));
      break;
    }
  } catch (err) {
    if (ex.signal.aborted) return;
    await ex.writeEvent(sseError(ApiError.from(err).toOpenAI()));
  }
  if (ex.signal.aborted) return;
  await ex.writeEvent(SSE_DONE);
  ex.endEventStream();
}
