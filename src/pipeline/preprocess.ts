// Turn a validated chat request into prompt token ids: the model's chat template and
// tokenizer run natively over the messages' byte span (they never become JS objects).
// Long prompts are rendered and tokenized on the libuv pool to keep the event loop free.

import { ApiError } from '../protocol/errors.js';
import type { Span } from '../protocol/fields.js';
import type { ServedModel } from './served-model.js';
import { isClientError } from '../native/core.js';

/**
 * Spans above this many bytes are tokenized off the event loop: encoding costs about
 * 0.3 µs per byte today (native/core), so 1 KiB is already past the ~50 µs budget for
 * synchronous work on the loop.
 */
const ASYNC_THRESHOLD_BYTES = 1024;

/** What the template renderer needs: spans of a JSON body and the template options. */
export interface TemplateInput {
  messages: Span;
  tools: Span | null;
  useRawPrompt: boolean;
  addGenerationPrompt: boolean;
  /** Raw JSON object text of extra template kwargs, or null. */
  templateKwargs: string | null;
}

/**
 * The prompt ids of a chat request: the ids themselves for a short prompt (rendered and
 * encoded on the event loop), a promise for a long one (on the libuv pool). Callers may
 * `await` either; the unary path then saves the promise and the microtask hops.
 */
export function tokenizeChat(model: ServedModel, body: Buffer, req: TemplateInput): Uint32Array | Promise<Uint32Array> {
  const t0 = performance.now();
  const ids = render(model, body, req);
  if (ids instanceof Promise) return ids.then((v) => observed(model, t0, v));
  return observed(model, t0, ids);
}

function observed(model: ServedModel, t0: number, ids: Uint32Array): Uint32Array {
  model.stats.tokenizer.observe((performance.now() - t0) / 1000);
  return ids;
}

function render(model: ServedModel, body: Buffer, req: TemplateInput): Uint32Array | Promise<Uint32Array> {
  const m = model.native;
  const { start, end } = req.messages;
  try {
    if (req.useRawPrompt) return m.encodeRawMessages(body, start, end);
    const ts = req.tools ? req.tools.start : -1;
    const te = req.tools ? req.tools.end : -1;
    if (end - start > ASYNC_THRESHOLD_BYTES) {
      return m.encodeChatAsync(body, start, end, ts, te, req.addGenerationPrompt, req.templateKwargs).catch(renderFailure);
    }
    return m.encodeChat(body, start, end, ts, te, req.addGenerationPrompt, req.templateKwargs);
  } catch (err) {
    return renderFailure(err);
  }
}

/**
 * Faults in what the client sent (message shapes, template raise_exception) are 400s;
 * anything else is the server's own failure.
 */
function renderFailure(err: unknown): never {
  if (isClientError(err)) throw ApiError.badRequest((err as Error).message, 'messages');
  throw err;
}

/**
 * The completion budget for a prompt: the requested maximum, or what is left of the
 * context window. A request that cannot fit is a 400, before any engine work.
 */
export function completionBudget(model: ServedModel, promptTokens: number, requested: number | undefined): number | undefined {
  const ctx = model.info.contextLength;
  if (ctx === null) return requested;
  if (promptTokens >= ctx) {
    throw ApiError.badRequest(
      `This model's maximum context length is ${ctx} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`,
      'messages',
      'context_length_exceeded',
    );
  }
  if (requested === undefined) return ctx - promptTokens;
  if (promptTokens + requested > ctx) {
    throw ApiError.badRequest(
      `This model's maximum context length is ${ctx} tokens. However, you requested ${promptTokens + requested} tokens (${promptTokens} in the messages, ${requested} in the completion). Please reduce the length of the messages or completion.`,
      'max_tokens',
      'context_length_exceeded',
    );
  }
  return requested;
}
