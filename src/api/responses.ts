// POST /v1/responses: the Responses API run through the chat pipeline.

import { randomUUID } from 'node:crypto';
import { readResponsesRequest } from '../protocol/responses-request.js';
import { ResponsesStreamWriter, responseObject, responsesUsage, type ResponseState } from '../protocol/responses-response.js';
import { tokenizeChat, completionBudget } from '../pipeline/preprocess.js';
import { generate } from '../pipeline/generate.js';
import { decodeOutputs, type OutputEvent } from '../pipeline/outputs.js';
import { modelFor, type AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { streamEvents } from './sse.js';
import { refuseNvext, routeHints } from './route-hints.js';
import { speculativePrefill } from '../pipeline/speculative-prefill.js';

export function responses(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const arrived = performance.now();
    const req = readResponsesRequest(ex.body, ctx.ignoreUnsupportedFields, (h) => ex.header(h));
    const model = modelFor(ctx, req.model);
    ex.describe(model, req.stream);
    refuseNvext(req.nvext, '/v1/responses', ['extra_fields', 'annotations', 'token_data', 'use_raw_prompt', 'greed_sampling']);
    const route = routeHints(req.nvext, (h) => ex.header(h));
    const promptIds = await tokenizeChat(model, req.prompt.body, req.prompt);
    const maxTokens = completionBudget(model, promptIds.length, req.maxOutputTokens);
    const gen = generate(model, promptIds, { n: 1, maxTokens, temperature: req.temperature, topP: req.topP }, ex.requestId, ex.signal, route);
    const outputs = decodeOutputs(model, gen, { n: 1, skipSpecialTokens: true, arrived, maxTokens });
    const hex = randomUUID().replaceAll('-', '');
    const state: ResponseState = { id: `resp_${hex}`, messageId: `msg_${hex}`, createdAt: Math.floor(Date.now() / 1000), req };
    const reply = req.stream ? await streamResponse(ex, state, outputs) : await unaryResponse(ex, state, outputs);
    if (req.nvext.agentHints.speculativePrefill && !ex.signal.aborted) speculativePrefill(model, req.prompt.body, req.prompt, reply, route, ex.requestId);
  };
}

/** Answers with one response object; returns its text. */
async function unaryResponse(ex: Exchange, s: ResponseState, outputs: AsyncIterable<OutputEvent>): Promise<string> {
  let text = '';
  let finish = 'stop';
  for await (const ev of outputs) {
    if (ev.kind === 'text') text += ev.text;
    else if (ev.kind === 'finish') finish = ev.reason;
    else {
      const u = ev.usage;
      ex.sendJson(200, JSON.stringify(responseObject(s, text, finish, responsesUsage(u.promptTokens, u.completionTokens, u.cachedTokens))));
    }
  }
  return text;
}

/** Streams the response events; returns the text. */
async function streamResponse(ex: Exchange, s: ResponseState, outputs: AsyncIterable<OutputEvent>): Promise<string> {
  const w = new ResponsesStreamWriter(s);
  let text = '';
  let finish = 'stop';
  await streamEvents(ex, outputs, {
    start: () => w.start(),
    event(ev) {
      if (ev.kind === 'text') {
        text += ev.text;
        return w.delta(ev.text);
      }
      if (ev.kind === 'finish') {
        finish = ev.reason;
        return '';
      }
      const u = ev.usage;
      return w.end(finish, responsesUsage(u.promptTokens, u.completionTokens, u.cachedTokens));
    },
    error: (err) => w.error(err),
    done: '',
  });
  return text;
}
