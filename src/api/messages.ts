// POST /v1/messages (Anthropic Messages) and POST /v1/messages/count_tokens: the
// request is reshaped into chat-template messages and runs the chat pipeline; the
// answer is written in Anthropic's shapes and error format. With the model's parsers,
// reasoning becomes `thinking` blocks and tool calls `tool_use` blocks (stop_reason
// tool_use); nvext.use_raw_prompt skips the template as on chat completions.

import { randomUUID } from 'node:crypto';
import { readAnthropicRequest, readCountTokensRequest, type AnthropicRequest } from '../protocol/anthropic-request.js';
import { AnthropicStreamWriter, anthropicMessage, anthropicUsage, stopReasonOf } from '../protocol/anthropic-response.js';
import { tokenizeChat } from '../pipeline/preprocess.js';
import type { TokenCounts } from '../pipeline/outputs.js';
import type { ParsedEvent } from '../pipeline/parse-outputs.js';
import { AnthropicContent } from '../protocol/anthropic-content.js';
import { chatProcessorOf, modelFor, type AppContext } from './context.js';
import { serveMessages } from '../processors/serve-messages.js';
import type { Exchange } from './exchange.js';
import { streamEvents } from './sse.js';
import { endChatTurn, startChatTurn, type ChatTurn } from './chat-turn.js';

export function messages(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const arrived = performance.now();
    const req = readAnthropicRequest(ex.body, ctx.ignoreUnsupportedFields, (h) => ex.header(h));
    const model = modelFor(ctx, req.model);
    ex.describe(model, req.stream);
    const turn: ChatTurn = {
      endpoint: '/v1/messages',
      prompt: req.prompt,
      nvext: req.nvext,
      maxTokens: req.maxTokens,
      sampling: { temperature: req.temperature, topP: req.topP, topK: req.topK, constraint: req.constraint },
      stop: req.stopSequences,
      toolChoice: req.toolChoice,
    };
    const processor = chatProcessorOf(ctx, model);
    if (processor) return serveMessages(processor.current(), ex, req, turn);
    const run = await startChatTurn(model, ex, arrived, turn);
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    let reply: string;
    if (req.stream) {
      const first: TokenCounts = { promptTokens: run.promptIds.length, completionTokens: 0, cachedTokens: 0 };
      reply = await streamMessage(ex, req, noteFirstCounts(run.decoded, first), id, first);
    } else reply = await unaryMessage(ex, req, run.decoded, id);
    endChatTurn(model, ex, turn, run, reply);
  };
}

/**
 * Passes the events through, copying the token counts as of the first one into `into`:
 * the engine reports the prompt's cached tokens from its first output on, and
 * message_start (written once the first output is in) reports them.
 */
async function* noteFirstCounts(events: AsyncIterable<ParsedEvent>, into: TokenCounts): AsyncGenerator<ParsedEvent> {
  const it = events[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) return;
  Object.assign(into, first.value.usage);
  yield first.value;
  yield* { [Symbol.asyncIterator]: () => it };
}

/** One parsed output event into the content blocks; returns the SSE text ('' when not streaming). */
function addEvent(c: AnthropicContent, ev: ParsedEvent): string {
  if (ev.kind === 'text') return c.text(ev.text);
  if (ev.kind === 'reasoning') return c.thinking(ev.text);
  if (ev.kind === 'tool_start') return c.toolStart(ev.id, ev.name);
  if (ev.kind === 'tool_args') return c.toolArgs(ev.text);
  return '';
}

function replyText(c: AnthropicContent): string {
  return c.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/** Answers with one message; returns its text. */
async function unaryMessage(ex: Exchange, req: AnthropicRequest, outputs: AsyncIterable<ParsedEvent>, id: string): Promise<string> {
  const c = new AnthropicContent(false);
  let stop = stopReasonOf('stop', null);
  let stopSequence: string | null = null;
  for await (const ev of outputs) {
    if (ev.kind === 'finish') {
      stop = stopReasonOf(ev.reason, ev.matchedStop);
      stopSequence = typeof ev.matchedStop === 'string' ? ev.matchedStop : null;
    } else if (ev.kind === 'end') {
      c.finish();
      const u = ev.usage;
      ex.sendJson(200, anthropicMessage(id, req.model, c.content, stop, stopSequence, anthropicUsage(u.promptTokens, u.completionTokens, u.cachedTokens)));
    } else addEvent(c, ev);
  }
  return replyText(c);
}

/** Streams the message; returns its text. */
async function streamMessage(ex: Exchange, req: AnthropicRequest, outputs: AsyncIterable<ParsedEvent>, id: string, first: TokenCounts): Promise<string> {
  const w = new AnthropicStreamWriter(id, req.model);
  const c = new AnthropicContent(true);
  let stop = stopReasonOf('stop', null);
  let stopSequence: string | null = null;
  await streamEvents(ex, outputs, {
    start: () => w.start(anthropicUsage(first.promptTokens, 0, first.cachedTokens)),
    event(ev) {
      if (ev.kind === 'finish') {
        stop = stopReasonOf(ev.reason, ev.matchedStop);
        stopSequence = typeof ev.matchedStop === 'string' ? ev.matchedStop : null;
        return '';
      }
      if (ev.kind === 'end') return c.finish() + w.end(stop, stopSequence, anthropicUsage(ev.usage.promptTokens, ev.usage.completionTokens, ev.usage.cachedTokens));
      return addEvent(c, ev);
    },
    error: (err) => w.error(err),
    done: '',
  });
  return replyText(c);
}

export function countTokens(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const req = readCountTokensRequest(ex.body, ctx.ignoreUnsupportedFields);
    const model = modelFor(ctx, req.model);
    const ids = await tokenizeChat(model, req.prompt.body, req.prompt);
    ex.sendJson(200, JSON.stringify({ input_tokens: ids.length }));
  };
}
