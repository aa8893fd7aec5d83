// /v1/chat/completions served by a processor: the request as the client sent it goes to
// the engine; a stream's chunks are written out as SSE events, a unary answer gathers them
// into one chat.completion. setResponseHeader lands while the response is not committed:
// always for a unary answer; for a stream only with a configured pre-commit peek
// (--stream-precommit-peek-ms, PORTICO_/DYN_HTTP_PRE_COMMIT_ERROR_PEEK_MS), and only
// until its head goes out.

import { randomHexId } from '../protocol/random-ids.js';
import { chatCompletion, usageOf, type ChatChoice } from '../protocol/chat-response.js';
import { ApiError } from '../protocol/errors.js';
import type { Exchange } from '../api/exchange.js';
import { precommitPeekConfigured, streamEvents } from '../api/sse.js';
import type { ChatCompletionChunk, ChatCompletionRequest, ChatEngine } from './contract.js';
import { ChunkReader, malformedChunk } from './chunk-events.js';
import { guardedChunks } from './guarded.js';
import { ProcessorContext } from './request-context.js';

export function parseChatRequest(body: Buffer): ChatCompletionRequest {
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw ApiError.badRequest(`the request body is not valid JSON: ${(err as Error).message}`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw ApiError.badRequest('the request body must be a JSON object');
  return v as ChatCompletionRequest;
}

export async function serveChat(engine: ChatEngine, ex: Exchange, request: ChatCompletionRequest): Promise<void> {
  const stream = request.stream === true;
  const peek = precommitPeekConfigured();
  const ctx = new ProcessorContext(ex, '/v1/chat/completions', !stream || peek);
  const chunks = guardedChunks(engine, request, ctx);
  if (stream) await streamChat(ex, ctx, chunks, request.model, peek);
  else await unaryChat(ex, ctx, chunks, request.model);
}

async function streamChat(ex: Exchange, ctx: ProcessorContext, chunks: AsyncIterable<ChatCompletionChunk>, model: string, peek: boolean): Promise<void> {
  const id = `chatcmpl-${randomHexId()}`;
  const created = Math.floor(Date.now() / 1000);
  await streamEvents(
    ex,
    chunks,
    {
      start() {
        ctx.commit();
        return '';
      },
      event: (c) => `data: ${JSON.stringify(filled(c, id, created, model))}\n\n`,
    },
    peek ? undefined : 0,
  );
}

/** The chunk with the fields a client expects filled in where the processor left them out. */
function filled(c: ChatCompletionChunk, id: string, created: number, model: string): ChatCompletionChunk {
  if (!c || typeof c !== 'object' || Array.isArray(c) || !Array.isArray(c.choices ?? [])) throw malformedChunk(c);
  if (c.id !== undefined && c.object !== undefined && c.created !== undefined && c.model !== undefined) return c;
  return { id, object: 'chat.completion.chunk', created, model, ...c };
}

async function unaryChat(ex: Exchange, ctx: ProcessorContext, chunks: AsyncIterable<ChatCompletionChunk>, model: string): Promise<void> {
  const reader = new ChunkReader();
  const choices: ChatChoice[] = [];
  const choice = (i: number) => (choices[i] ??= { index: i, content: '', reasoning: '', toolCalls: [], finishReason: 'stop' });
  for await (const chunk of chunks) {
    for (const ev of reader.events(chunk)) {
      const c = choice(ev.index);
      if (ev.kind === 'text') c.content += ev.text;
      else if (ev.kind === 'reasoning') c.reasoning += ev.text;
      else if (ev.kind === 'tool_start') c.toolCalls[ev.call] = { id: ev.id, name: ev.name, arguments: '' };
      else if (ev.kind === 'tool_args') c.toolCalls[ev.call].arguments += ev.text;
      else c.finishReason = ev.reason;
    }
  }
  if (choices.length === 0) choice(0);
  const list = Array.from(choices, (c, i) => c ?? { index: i, content: '', reasoning: '', toolCalls: [], finishReason: 'stop' });
  for (const c of list) c.toolCalls = c.toolCalls.filter(Boolean);
  const u = reader.usage ?? { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
  ctx.commit();
  ex.sendJson(200, chatCompletion(reader.id ?? `chatcmpl-${randomHexId()}`, model, reader.created ?? Math.floor(Date.now() / 1000), list, usageOf(u.promptTokens, u.completionTokens, u.cachedTokens)));
}
