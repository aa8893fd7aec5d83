// POST /v1/responses: the Responses API run through the chat pipeline. With the model's
// parsers, reasoning becomes `reasoning` output items and tool calls `function_call`
// items; nvext.use_raw_prompt skips the template as on chat completions.

import { randomUUID } from 'node:crypto';
import { readResponsesRequest } from '../protocol/responses-request.js';
import { ResponsesStreamWriter, responseObject, responsesUsage, type ResponseState } from '../protocol/responses-response.js';
import type { ParsedEvent } from '../pipeline/parse-outputs.js';
import { ResponseOutput } from '../protocol/responses-output.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { chatProcessorOf, modelFor, type AppContext } from './context.js';
import { serveResponses } from '../processors/serve-responses.js';
import type { Exchange } from './exchange.js';
import { streamGeneration, type StreamFormat } from './sse.js';
import { endChatTurn, startChatTurn, type ChatTurn, type ChatTurnRun } from './chat-turn.js';
import { runGeneration } from '../pipeline/run.js';

export function responses(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const arrived = performance.now();
    const req = readResponsesRequest(ex.body, ctx.ignoreUnsupportedFields, (h) => ex.header(h));
    const model = modelFor(ctx, req.model);
    ex.describe(model, req.stream);
    const turn: ChatTurn = {
      endpoint: '/v1/responses',
      prompt: req.prompt,
      nvext: req.nvext,
      maxTokens: req.maxOutputTokens,
      sampling: { temperature: req.temperature, topP: req.topP, constraint: req.constraint },
      toolChoice: req.toolMode,
    };
    const processor = chatProcessorOf(ctx, model);
    if (processor) return serveResponses(processor.current(), ex, model, req, turn);
    const run = await startChatTurn(model, ex, arrived, turn);
    const hex = randomUUID().replaceAll('-', '');
    const state: ResponseState = { id: `resp_${hex}`, hex, createdAt: Math.floor(Date.now() / 1000), req };
    const reply = req.stream ? await streamResponse(ex, model, state, run) : await unaryResponse(ex, model, state, run);
    endChatTurn(model, ex, turn, run, reply);
  };
}

/** One parsed output event into the output items; returns the stream events ('' when not streaming). */
function addEvent(o: ResponseOutput, ev: ParsedEvent): string {
  if (ev.kind === 'text') return o.text(ev.text);
  if (ev.kind === 'reasoning') return o.reasoning(ev.text);
  if (ev.kind === 'tool_start') return o.toolStart(ev.id, ev.name);
  if (ev.kind === 'tool_args') return o.toolArgs(ev.text);
  return '';
}

/**
 * usage.output_tokens_details.reasoning_tokens: the reasoning text re-encoded with the
 * model's tokenizer (the parsers see text, not token ids; a token split across the
 * reasoning boundary may be counted on either side).
 */
function reasoningTokens(model: ServedModel, o: ResponseOutput): number {
  let text = '';
  for (const i of o.output) if (i.type === 'reasoning') text += i.content[0].text;
  return text === '' ? 0 : model.native.encode(text, false).length;
}

function replyText(o: ResponseOutput): string {
  return o.output.map((i) => (i.type === 'message' ? i.content[0].text : '')).join('');
}

/** Answers with one response object; returns its text. */
async function unaryResponse(ex: Exchange, model: ServedModel, s: ResponseState, run: ChatTurnRun): Promise<string> {
  const o = new ResponseOutput(s.hex, null);
  let finish = 'stop';
  await runGeneration(run.request, {
    event(ev) {
      if (ev.kind === 'finish') finish = ev.reason;
      else if (ev.kind === 'end') {
        o.finish(finish === 'length');
        const u = ev.usage;
        ex.sendJson(200, JSON.stringify(responseObject(s, o.output, finish, responsesUsage(u.promptTokens, u.completionTokens, u.cachedTokens, reasoningTokens(model, o)))));
      } else addEvent(o, ev);
    },
  });
  return replyText(o);
}

/** Streams the response events; returns the text. */
async function streamResponse(ex: Exchange, model: ServedModel, s: ResponseState, run: ChatTurnRun): Promise<string> {
  const w = new ResponsesStreamWriter(s);
  const o = new ResponseOutput(s.hex, w);
  let finish = 'stop';
  const fmt: StreamFormat<ParsedEvent> = {
    start: () => w.start(),
    event(ev) {
      if (ev.kind === 'finish') {
        finish = ev.reason;
        return '';
      }
      if (ev.kind === 'end') {
        const u = ev.usage;
        const closing = o.finish(finish === 'length');
        return closing + w.end(finish, responsesUsage(u.promptTokens, u.completionTokens, u.cachedTokens, reasoningTokens(model, o)), o.output);
      }
      return addEvent(o, ev);
    },
    error: (err) => w.error(err),
    done: '',
  };
  await streamGeneration(ex, fmt, (sink) => runGeneration(run.request, sink));
  return replyText(o);
}
