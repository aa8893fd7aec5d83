// agent_hints.speculative_prefill: once a chat turn has finished, warm the KV cache
// for the next turn. The next request will repeat this conversation plus the reply
// just generated, so that prompt (messages + assistant reply + an empty user turn,
// rendered by the model's own chat template exactly as the next request's will be up
// to that user turn's text, no generation prompt) is sent with max_tokens = 1, routed like
// the turn itself (same session, salt and hints), in the background. Failures are
// logged and otherwise ignored: this is an optimisation only.

import { log } from '../log.js';
import type { Span } from '../protocol/fields.js';
import { generate, type RouteHints } from './generate.js';
import { tokenizeChat, type TemplateInput } from './preprocess.js';
import type { ServedModel } from './served-model.js';

const TIMEOUT_MS = 30_000;

/**
 * A JSON body whose `messages` are the turn's messages followed by the assistant
 * reply, with the spans the template renderer reads. The original messages bytes
 * are copied as they are (no parse); only the closing bracket is rewritten.
 */
export function nextTurnBody(body: Buffer, messages: Span, tools: Span | null, reply: string): { body: Buffer; messages: Span; tools: Span | null } {
  const msgs = body.toString('utf8', messages.start, messages.end);
  const close = msgs.lastIndexOf(']');
  const head = msgs.slice(0, close).trimEnd();
  const sep = head.endsWith('[') ? '' : ',';
  // An empty user turn after the reply: templates render a reply differently when it is
  // the last message (thinking blocks), and the next request will have a user turn after it.
  const nextMessages = `${head}${sep}{"role":"assistant","content":${JSON.stringify(reply)}},{"role":"user","content":""}]`;
  const toolsText = tools ? body.toString('utf8', tools.start, tools.end) : null;
  const prefix = '{"messages":';
  const mid = toolsText ? ',"tools":' : '';
  const text = `${prefix}${nextMessages}${mid}${toolsText ?? ''}}`;
  const mStart = Buffer.byteLength(prefix);
  const mEnd = mStart + Buffer.byteLength(nextMessages);
  const tStart = mEnd + Buffer.byteLength(mid);
  return {
    body: Buffer.from(text, 'utf8'),
    messages: { start: mStart, end: mEnd },
    tools: toolsText ? { start: tStart, end: tStart + Buffer.byteLength(toolsText) } : null,
  };
}

export interface TurnInput {
  messages: Span;
  tools: Span | null;
  useRawPrompt: boolean;
  templateKwargs: string | null;
}

/** Start the speculative prefill of the next turn; returns at once. */
export function speculativePrefill(model: ServedModel, body: Buffer, turn: TurnInput, reply: string, route: RouteHints, requestId: string): void {
  void run(model, body, turn, reply, route, requestId).catch((err: unknown) => {
    log.debug('speculative prefill failed', { request_id: requestId, error: String((err as Error)?.message ?? err) });
  });
}

/**
 * The completions form: the next request repeats the prompt followed by the text just
 * generated, so prompt ids + the reply's ids are prefilled (blocks up to the seam
 * match whatever the next prompt tokenizes to). Returns at once.
 */
export function speculativePrefillIds(model: ServedModel, promptIds: Uint32Array, reply: string, route: RouteHints, requestId: string): void {
  const tail = model.native.encode(reply, false);
  const ids = new Uint32Array(promptIds.length + tail.length);
  ids.set(promptIds);
  ids.set(tail, promptIds.length);
  void prefill(model, ids, route, requestId).catch((err: unknown) => {
    log.debug('speculative prefill failed', { request_id: requestId, error: String((err as Error)?.message ?? err) });
  });
}

async function run(model: ServedModel, body: Buffer, turn: TurnInput, reply: string, route: RouteHints, requestId: string): Promise<void> {
  if (turn.useRawPrompt) return;
  const next = nextTurnBody(body, turn.messages, turn.tools, reply);
  const input: TemplateInput = { messages: next.messages, tools: next.tools, useRawPrompt: false, addGenerationPrompt: false, templateKwargs: turn.templateKwargs };
  const ids = await tokenizeChat(model, next.body, input);
  await prefill(model, ids, route, requestId);
}

async function prefill(model: ServedModel, ids: Uint32Array, route: RouteHints, requestId: string): Promise<void> {
  // Not pinned to a worker id: the router sends it where the turn's prefix lives.
  const hints: RouteHints = { ...route, workerId: undefined };
  const gen = generate(model, ids, { n: 1, maxTokens: 1 }, `${requestId}-spec`, AbortSignal.timeout(TIMEOUT_MS), hints);
  for await (const ev of gen.events) void ev;
}
