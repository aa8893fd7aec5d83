// /v1/messages served by a processor: the Anthropic request, read into a chat turn, goes
// to the engine as a chat completion request; its chunks come back as an Anthropic
// message (or its event stream). Processor headers are never carried here (spec 002).

import { randomHexId } from '../protocol/random-ids.js';
import type { ChatTurn } from '../api/chat-turn.js';
import type { Exchange } from '../api/exchange.js';
import { precommitPeekConfigured, streamEvents } from '../api/sse.js';
import { AnthropicContent } from '../protocol/anthropic-content.js';
import type { AnthropicRequest } from '../protocol/anthropic-request.js';
import { AnthropicStreamWriter, anthropicMessage, anthropicUsage, stopReasonOf, type AnthropicStopReason } from '../protocol/anthropic-response.js';
import type { ChatEngine } from './contract.js';
import { guardedChunks } from './guarded.js';
import { ProcessorContext } from './request-context.js';
import { chatRequestOfTurn } from './turn-request.js';
import { turnEvents, type TurnEvent } from './turn-events.js';

function add(c: AnthropicContent, ev: TurnEvent): string {
  if (ev.kind === 'text') return c.text(ev.text);
  if (ev.kind === 'reasoning') return c.thinking(ev.text);
  if (ev.kind === 'tool_start') return c.toolStart(ev.id, ev.name);
  if (ev.kind === 'tool_args') return c.toolArgs(ev.text);
  return '';
}

export async function serveMessages(engine: ChatEngine, ex: Exchange, req: AnthropicRequest, turn: ChatTurn): Promise<void> {
  const ctx = new ProcessorContext(ex, '/v1/messages', false);
  const events = turnEvents(guardedChunks(engine, chatRequestOfTurn(req.model, turn, req.stream), ctx));
  const id = `msg_${randomHexId()}`;
  const c = new AnthropicContent(req.stream);
  let stop: AnthropicStopReason = stopReasonOf('stop', null);
  if (!req.stream) {
    for await (const ev of events) {
      if (ev.kind === 'finish') stop = stopReasonOf(ev.reason, null);
      else if (ev.kind === 'end') {
        c.finish();
        const u = ev.usage;
        ex.sendJson(200, anthropicMessage(id, req.model, c.content, stop, null, anthropicUsage(u.promptTokens, u.completionTokens, u.cachedTokens)));
      } else add(c, ev);
    }
    return;
  }
  const w = new AnthropicStreamWriter(id, req.model);
  await streamEvents(
    ex,
    events,
    {
      start: () => w.start(anthropicUsage(0, 0, 0)),
      event(ev) {
        if (ev.kind === 'finish') {
          stop = stopReasonOf(ev.reason, null);
          return '';
        }
        if (ev.kind === 'end') return c.finish() + w.end(stop, null, anthropicUsage(ev.usage.promptTokens, ev.usage.completionTokens, ev.usage.cachedTokens));
        return add(c, ev);
      },
      error: (err) => w.error(err),
      done: '',
    },
    precommitPeekConfigured() ? undefined : 0,
  );
}
