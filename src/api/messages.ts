// POST /v1/messages (Anthropic Messages) and POST /v1/messages/count_tokens: the
// request is reshaped into chat-template messages and runs the chat pipeline; the
// answer is written in Anthropic's shapes and error format.

import { randomUUID } from 'node:crypto';
import { readAnthropicRequest, readCountTokensRequest, type AnthropicRequest } from '../protocol/anthropic-request.js';
import { AnthropicStreamWriter, anthropicMessage, anthropicUsage, stopReasonOf } from '../protocol/anthropic-response.js';
import { tokenizeChat, completionBudget } from '../pipeline/preprocess.js';
import { generate } from '../pipeline/generate.js';
import { decodeOutputs, type OutputEvent } from '../pipeline/outputs.js';
import { modelFor, type AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { streamEvents } from './sse.js';
import { refuseNvext, routeHints } from './route-hints.js';
import { speculativePrefill } from '../pipeline/speculative-prefill.js';

export function messages(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const arrived = performance.now();
    const req = readAnthropicRequest(ex.body, ctx.ignoreUnsupportedFields, (h) => ex.header(h));
    const model = modelFor(ctx, req.model);
    ex.describe(model, req.stream);
    refuseNvext(req.nvext, '/v1/messages', ['extra_fields', 'annotations', 'token_data', 'use_raw_prompt', 'greed_sampling']);
    const route = routeHints(req.nvext, (h) => ex.header(h));
    const promptIds = await tokenizeChat(model, req.prompt.body, req.prompt);
    const maxTokens = completionBudget(model, promptIds.length, req.maxTokens);
    const gen = generate(model, promptIds, { n: 1, maxTokens, temperature: req.temperature, topP: req.topP, topK: req.topK }, ex.requestId, ex.signal, route);
    const outputs = decodeOutputs(model, gen, { n: 1, skipSpecialTokens: true, arrived, maxTokens, stop: req.stopSequences });
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    const reply = req.stream ? await streamMessage(ex, req, outputs, id, promptIds.length) : await unaryMessage(ex, req, outputs, id);
    if (req.nvext.agentHints.speculativePrefill && !ex.signal.aborted) speculativePrefill(model, req.prompt.body, req.prompt, reply, route, ex.requestId);
  };
}

/** Answers with one message; returns its text. */
async function unaryMessage(ex: Exchange, req: AnthropicRequest, outputs: AsyncIterable<OutputEvent>, id: string): Promise<string> {
  let text = '';
  let stop = stopReasonOf('stop', null);
  let stopSequence: string | null = null;
  for await (const ev of outputs) {
    if (ev.kind === 'text') text += ev.text;
    else if (ev.kind === 'finish') {
      stop = stopReasonOf(ev.reason, ev.matchedStop);
      stopSequence = typeof ev.matchedStop === 'string' ? ev.matchedStop : null;
    } else {
      const u = ev.usage;
      ex.sendJson(200, anthropicMessage(id, req.model, text, stop, stopSequence, anthropicUsage(u.promptTokens, u.completionTokens, u.cachedTokens)));
    }
  }
  return text;
}

/** Streams the message; returns its text. */
async function streamMessage(ex: Exchange, req: AnthropicRequest, outputs: AsyncIterable<OutputEvent>, id: string, inputTokens: number): Promise<string> {
  const w = new AnthropicStreamWriter(id, req.model);
  let text = '';
  let stop = stopReasonOf('stop', null);
  let stopSequence: string | null = null;
  await streamEvents(ex, outputs, {
    start: () => w.start(inputTokens),
    event(ev) {
      if (ev.kind === 'text') {
        text += ev.text;
        return w.text(ev.text);
      }
      if (ev.kind === 'finish') {
        stop = stopReasonOf(ev.reason, ev.matchedStop);
        stopSequence = typeof ev.matchedStop === 'string' ? ev.matchedStop : null;
        return '';
      }
      return w.end(stop, stopSequence, ev.usage.completionTokens);
    },
    error: (err) => w.error(err),
    done: '',
  });
  return text;
}

export function countTokens(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const req = readCountTokensRequest(ex.body, ctx.ignoreUnsupportedFields);
    const model = modelFor(ctx, req.model);
    const ids = await tokenizeChat(model, req.prompt.body, req.prompt);
    ex.sendJson(200, JSON.stringify({ input_tokens: ids.length }));
  };
}
