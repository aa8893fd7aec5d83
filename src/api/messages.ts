// POST /v1/messages (Anthropic Messages) and POST /v1/messages/count_tokens: the
// request is reshaped into chat-template messages and runs the chat pipeline; the
// answer is written in Anthropic's shapes and error format. With the model's parsers,
// reasoning becomes `thinking` blocks and tool calls `tool_use` blocks (stop_reason
// tool_use); nvext.use_raw_prompt skips the template as on chat completions.

import { randomHexId } from '../protocol/random-ids.js';
import { readAnthropicRequest, readCountTokensRequest, type AnthropicRequest } from '../protocol/anthropic-request.js';
import { AnthropicStreamWriter, anthropicMessage, anthropicUsage, stopReasonOf } from '../protocol/anthropic-response.js';
import { tokenizeChat } from '../pipeline/preprocess.js';
import { imagePromptFor, visionOf } from './prompt.js';
import { runGeneration } from '../pipeline/run.js';
import type { ParsedEvent } from '../pipeline/parse-outputs.js';
import { AnthropicContent } from '../protocol/anthropic-content.js';
import { chatProcessorOf, modelFor, type AppContext } from './context.js';
import { serveMessages } from '../processors/serve-messages.js';
import type { Exchange } from './exchange.js';
import { streamGeneration, type StreamFormat } from './sse.js';
import { endChatTurn, startChatTurn, type ChatTurn, type ChatTurnRun } from './chat-turn.js';

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
      parallelToolCalls: req.parallelToolCalls,
    };
    const processor = chatProcessorOf(ctx, model);
    if (processor) return serveMessages(processor.current(), ex, req, turn);
    const run = await startChatTurn(model, ex, arrived, turn);
    const id = `msg_${randomHexId()}`;
    const reply = req.stream ? await streamMessage(ex, req, run, id) : await unaryMessage(ex, req, run, id);
    endChatTurn(model, ex, turn, run, reply);
  };
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
async function unaryMessage(ex: Exchange, req: AnthropicRequest, run: ChatTurnRun, id: string): Promise<string> {
  const c = new AnthropicContent(false);
  let stop = stopReasonOf('stop', null);
  let stopSequence: string | null = null;
  await runGeneration(run.request, {
    event(ev) {
      if (ev.kind === 'finish') {
        stop = stopReasonOf(ev.reason, ev.matchedStop);
        stopSequence = typeof ev.matchedStop === 'string' ? ev.matchedStop : null;
      } else if (ev.kind === 'end') {
        c.finish();
        const u = ev.usage;
        ex.sendJson(200, anthropicMessage(id, req.model, c.content, stop, stopSequence, anthropicUsage(u.promptTokens, u.completionTokens, u.cachedTokens)));
      } else addEvent(c, ev);
    },
  });
  return replyText(c);
}

/** Streams the message; returns its text. */
async function streamMessage(ex: Exchange, req: AnthropicRequest, run: ChatTurnRun, id: string): Promise<string> {
  const w = new AnthropicStreamWriter(id, req.model);
  const c = new AnthropicContent(true);
  let stop = stopReasonOf('stop', null);
  let stopSequence: string | null = null;
  const fmt: StreamFormat<ParsedEvent> = {
    // message_start reports the prompt's cached tokens, which the engine reports from its
    // first output on: the counts as of the event the stream is committed with.
    start: (first) => w.start(anthropicUsage(first ? first.usage.promptTokens : run.promptIds.length, 0, first ? first.usage.cachedTokens : 0)),
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
  };
  await streamGeneration(ex, fmt, (sink) => runGeneration(run.request, sink));
  return replyText(c);
}

export function countTokens(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const req = readCountTokensRequest(ex.body, ctx.ignoreUnsupportedFields);
    const model = modelFor(ctx, req.model);
    const p = req.prompt;
    // Images count as the tokens they expand to (each is processed, as for a generation).
    const ids = p.images.length === 0 ? await tokenizeChat(model, p.body, p) : (await imagePromptFor(model, visionOf(model, p.images), p.body, p, p.images, null)).ids;
    ex.sendJson(200, JSON.stringify({ input_tokens: ids.length }));
  };
}
