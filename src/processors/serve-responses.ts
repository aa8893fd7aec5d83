// /v1/responses served by a processor: the Responses request, read into a chat turn, goes
// to the engine as a chat completion request; its chunks come back as a response object
// (or its event stream). Processor headers are never carried here (spec 002).

import { randomHexId } from '../protocol/random-ids.js';
import type { ChatTurn } from '../api/chat-turn.js';
import type { Exchange } from '../api/exchange.js';
import { precommitPeekConfigured, streamEvents } from '../api/sse.js';
import type { ServedModel } from '../pipeline/served-model.js';
import type { ResponsesRequest } from '../protocol/responses-request.js';
import { ResponsesStreamWriter, responseObject, responsesUsage, type ResponseState } from '../protocol/responses-response.js';
import { ResponseOutput } from '../protocol/responses-output.js';
import type { ChatEngine } from './contract.js';
import type { ChunkUsage } from './chunk-events.js';
import { guardedChunks } from './guarded.js';
import { ProcessorContext } from './request-context.js';
import { chatRequestOfTurn } from './turn-request.js';
import { turnEvents, type TurnEvent } from './turn-events.js';

function add(o: ResponseOutput, ev: TurnEvent): string {
  if (ev.kind === 'text') return o.text(ev.text);
  if (ev.kind === 'reasoning') return o.reasoning(ev.text);
  if (ev.kind === 'tool_start') return o.toolStart(ev.id, ev.name);
  if (ev.kind === 'tool_args') return o.toolArgs(ev.text);
  return '';
}

/** usage, with the reasoning text re-encoded for reasoning_tokens (as the native path counts it). */
function usageOf(model: ServedModel, o: ResponseOutput, u: ChunkUsage) {
  let text = '';
  for (const i of o.output) if (i.type === 'reasoning') text += i.content[0].text;
  return responsesUsage(u.promptTokens, u.completionTokens, u.cachedTokens, text === '' ? 0 : model.native.encode(text, false).length);
}

export async function serveResponses(engine: ChatEngine, ex: Exchange, model: ServedModel, req: ResponsesRequest, turn: ChatTurn): Promise<void> {
  const ctx = new ProcessorContext(ex, '/v1/responses', false);
  const events = turnEvents(guardedChunks(engine, chatRequestOfTurn(req.model, turn, req.stream), ctx));
  const hex = randomHexId();
  const s: ResponseState = { id: `resp_${hex}`, hex, createdAt: Math.floor(Date.now() / 1000), req };
  let finish = 'stop';
  if (!req.stream) {
    const o = new ResponseOutput(hex, null);
    for await (const ev of events) {
      if (ev.kind === 'finish') finish = ev.reason;
      else if (ev.kind === 'end') {
        o.finish(finish === 'length');
        ex.sendJson(200, JSON.stringify(responseObject(s, o.output, finish, usageOf(model, o, ev.usage))));
      } else add(o, ev);
    }
    return;
  }
  const w = new ResponsesStreamWriter(s);
  const o = new ResponseOutput(hex, w);
  await streamEvents(
    ex,
    events,
    {
      start: () => w.start(),
      event(ev) {
        if (ev.kind === 'finish') {
          finish = ev.reason;
          return '';
        }
        if (ev.kind === 'end') return o.finish(finish === 'length') + w.end(finish, usageOf(model, o, ev.usage), o.output);
        return add(o, ev);
      },
      error: (err) => w.error(err),
      done: '',
    },
    precommitPeekConfigured() ? undefined : 0,
  );
}
