// POST /v1/chat/completions: read and validate, tokenize natively, pick a worker,
// generate over gRPC, and answer as one JSON body or as an SSE stream.

import { randomUUID } from 'node:crypto';
import { readChatRequest, type ChatRequest } from '../protocol/chat-request.js';
import { ChatChunkWriter, chatCompletion, usageOf, type ChatChoice } from '../protocol/chat-response.js';
import { tokenizeChat, completionBudget } from '../pipeline/preprocess.js';
import { generate } from '../pipeline/generate.js';
import { decodeOutputs, type OutputEvent } from '../pipeline/outputs.js';
import { modelFor, type AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { streamEvents } from './sse.js';

export function chatCompletions(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const req = readChatRequest(ex.body, ctx.ignoreUnsupportedFields);
    const model = modelFor(ctx, req.model);
    const promptIds = await tokenizeChat(model, ex.body, req);
    const maxTokens = completionBudget(model, promptIds.length, req.sampling.maxTokens);
    const gen = generate(model, promptIds, { ...req.sampling, maxTokens }, ex.requestId, ex.signal);
    const outputs = decodeOutputs(model, gen, { n: req.sampling.n, skipSpecialTokens: req.skipSpecialTokens });
    const id = `chatcmpl-${randomUUID().replaceAll('-', '')}`;
    const created = Math.floor(Date.now() / 1000);
    if (req.stream) await streamChat(ex, req, outputs, id, created);
    else await unaryChat(ex, req, outputs, id, created);
  };
}

async function unaryChat(ex: Exchange, req: ChatRequest, outputs: AsyncIterable<OutputEvent>, id: string, created: number) {
  const choices: ChatChoice[] = Array.from({ length: req.sampling.n }, (_, index) => ({ index, content: '', finishReason: 'stop' }));
  for await (const ev of outputs) {
    if (ev.kind === 'text') choices[ev.index].content += ev.text;
    else if (ev.kind === 'finish') choices[ev.index].finishReason = ev.reason;
    else {
      const u = ev.usage;
      ex.sendJson(200, chatCompletion(id, req.model, created, choices, usageOf(u.promptTokens, u.completionTokens, u.cachedTokens)));
    }
  }
}

async function streamChat(ex: Exchange, req: ChatRequest, outputs: AsyncIterable<OutputEvent>, id: string, created: number) {
  const w = new ChatChunkWriter(id, req.model, created);
  await streamEvents(ex, outputs, {
    start: () => Array.from({ length: req.sampling.n }, (_, i) => w.role(i)).join(''),
    event(ev) {
      const usage = ev.kind !== 'end' && req.continuousUsage ? usageOf(ev.usage.promptTokens, ev.usage.completionTokens, ev.usage.cachedTokens) : null;
      if (ev.kind === 'text') return w.content(ev.index, ev.text, usage);
      if (ev.kind === 'finish') return w.finish(ev.index, ev.reason, usage);
      const u = ev.usage;
      return req.includeUsage ? w.usage(usageOf(u.promptTokens, u.completionTokens, u.cachedTokens)) : '';
    },
  });
}
