// Turn a validated chat request into prompt token ids: the model's chat template and
// tokenizer run natively over the messages' byte span (they never become JS objects).
// Long prompts are rendered and tokenized on the libuv pool to keep the event loop free.

import { ApiError } from '../protocol/errors.js';
import type { Span } from '../protocol/fields.js';
import type { ServedModel } from './served-model.js';
import { isClientError } from '../native/core.js';
import { continuedPrompt } from './continued-prompt.js';
import { checkVocab, type SamplingOptions } from '../protocol/sampling.js';
import type { RouteHints } from '../router/types.js';
import { ignorePrefillHeaders, readPrefillHeaders } from '../protocol/nvext.js';

/**
 * The validation that needs the served model, run before any rendering or tokenization
 * (spec 000: validation before costly work): token ids in logit_bias / stop_token_ids
 * against the vocabulary, a named worker that exists (and is up) and its dp_rank.
 */
export function validateForModel(model: ServedModel, sampling: Pick<SamplingOptions, 'logitBias' | 'stopTokenIds'> | null, route: RouteHints): void {
  if (sampling) checkVocab(sampling as SamplingOptions, model.info.vocabSize);
  const ph = route.prefillHeaders;
  if (ph) {
    if (model.pool.disaggregated) {
      const { id, rank } = readPrefillHeaders(ph);
      if (id !== undefined) route.prefillWorkerId = id;
      if (rank !== undefined) route.prefillDpRank = rank;
    } else ignorePrefillHeaders(ph);
    route.prefillHeaders = undefined;
  }
  model.router.validate(route);
}

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
  /** continue_final_message / a prefill: the final message's text the prompt ends with. */
  continueFinal?: string | null;
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
    if (req.continueFinal != null) {
      const text = continuedPrompt(m.renderChat(body, start, end, ts, te, false, req.templateKwargs), req.continueFinal);
      return end - start > ASYNC_THRESHOLD_BYTES ? m.encodeAsync(text, false).catch(renderFailure) : m.encode(text, false);
    }
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
 * anything else is the server's own failure. A shape error (native/core message_shape.rs)
 * starts with the member's path in backticks, which becomes the error's `param`.
 */
export function renderFailure(err: unknown): never {
  if (isClientError(err)) {
    const message = (err as Error).message;
    const path = /^`(messages\[\d+\][^`]*)`/.exec(message);
    // the native reader reads `tools` beside the messages and says so ("invalid messages JSON: tools: ...")
    const param = path ? path[1] : /^invalid messages JSON: tools:/.test(message) ? 'tools' : 'messages';
    throw ApiError.badRequest(message, param);
  }
  throw err;
}

/**
 * The completion budget for a prompt: the requested maximum; else the model's default
 * (generation_config.json max_new_tokens, the engine's max_tokens default) capped by what is
 * left of the context window; else what is left (config.json's context; with the engine's
 * context, the engine's default). A request that cannot fit is a 400, before any engine work. With no
 * known context length the prompt is still capped (--max-prompt-tokens), so a huge
 * prompt never reaches an engine. `what` names the prompt field in errors.
 */
export function completionBudget(model: ServedModel, promptTokens: number, requested: number | undefined, what: 'messages' | 'prompt' | 'input' = 'messages'): number | undefined {
  const ctx = model.info.contextLength;
  if (ctx === null) {
    if (promptTokens > model.maxPromptTokens) {
      throw ApiError.badRequest(
        `The prompt is ${promptTokens} tokens long; this server accepts at most ${model.maxPromptTokens} prompt tokens (--max-prompt-tokens) while the model's context length is unknown. Please reduce the length of the ${what}.`,
        what,
        'context_length_exceeded',
      );
    }
    return requested ?? model.info.samplingDefaults.maxTokens;
  }
  if (promptTokens >= ctx) {
    throw ApiError.badRequest(
      `This model's maximum context length is ${ctx} tokens. However, your ${what} resulted in ${promptTokens} tokens. Please reduce the length of the ${what}.`,
      what,
      'context_length_exceeded',
    );
  }
  if (requested === undefined) {
    // The model's default output length (vLLM's rule: what the context leaves caps it).
    const byDefault = model.info.samplingDefaults.maxTokens;
    if (byDefault !== undefined) return Math.min(byDefault, ctx - promptTokens);
    // The engine's own context (GetModelInfo) comes with the engine's own default length.
    return model.info.contextSource === 'engine' ? undefined : ctx - promptTokens;
  }
  if (promptTokens + requested > ctx) {
    throw ApiError.badRequest(
      `This model's maximum context length is ${ctx} tokens. However, you requested ${promptTokens + requested} tokens (${promptTokens} in the ${what}, ${requested} in the completion). Please reduce the length of the ${what} or completion.`,
      'max_tokens',
      'context_length_exceeded',
    );
  }
  return requested;
}
