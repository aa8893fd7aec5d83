// Sampling and length options shared by the generation endpoints: read from the
// request, range-checked, and handed to the engine untouched (backend-handled fields).

import type { GenerateConstraint } from '../engine/types.js';
import { ApiError } from './errors.js';
import { CONSTRAINT_FIELDS, readConstraint } from './constraint.js';
import { JsonType, type Fields } from './fields.js';
import { readStop } from './stop.js';

export const SAMPLING_FIELDS = [
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'seed',
  'n',
  'stop_token_ids',
  'ignore_eos',
  'min_tokens',
  'stop',
  'include_stop_str_in_output',
  'logit_bias',
  ...CONSTRAINT_FIELDS,
  'return_tokens_as_token_ids',
  // The passthrough allowlist (spec 000): type-checked even when unsupported fields are ignored.
  'detokenize',
  'allowed_token_ids',
  'bad_words_token_ids',
] as const;
export type SamplingField = (typeof SAMPLING_FIELDS)[number];

/** Most alternatives per position a request may ask for (vLLM's default max_logprobs). */
export const MAX_TOP_LOGPROBS = 20;

export interface SamplingOptions {
  /** Choices per prompt, 1..128. */
  n: number;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  repetitionPenalty?: number;
  /** A 64-bit integer, exactly as the client wrote it (a double would round past 2^53). */
  seed?: bigint;
  stopTokenIds?: number[];
  /** Stop strings, applied by Portico's stop jail (the engine gets the token-level stops). */
  stop?: string[];
  includeStopStrInOutput?: boolean;
  ignoreEos?: boolean;
  minTokens?: number;
  /** Token id → bias in [-100, 100]. */
  logitBias?: Map<number, number>;
  /** Structured output (response_format / guided_*; tool_choice required/named sets it too). */
  constraint?: GenerateConstraint;
  /** Report per-token log-probabilities. */
  logprobs?: boolean;
  /** Alternatives per position, 0..20 (needs logprobs). */
  topLogprobs?: number;
  /** Prompt logprobs with this many alternatives (completions echo with logprobs). */
  promptLogprobs?: number;
  /** Logprob tokens written as "token_id:<id>" (vLLM). */
  returnTokensAsTokenIds?: boolean;
  /** false: no text is produced, only token ids (and logprobs). Unset = true. */
  detokenize?: boolean;
}

type Reader = Pick<Fields<SamplingField>, 'number' | 'integer' | 'boolean' | 'raw' | 'array' | 'type' | 'string' | 'given'>;

export const U32_MAX = 0xffffffff;
export const I32_MAX = 0x7fffffff;

/** An integer past its wire type is a 400 naming the field (never a failure at the engine boundary). */
export function integerIn(name: string, v: number | undefined, lo: number, hi: number, wire: string): number | undefined {
  if (v === undefined) return v;
  if (v < lo || v > hi) throw ApiError.badRequest(`\`${name}\` must be ${wire} from ${lo} to ${hi}, got ${JSON.stringify(v)}`, name);
  return v;
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/**
 * `seed`: int64 (vLLM's bound). Past 2^53 a double cannot tell 2^63 - 1 from 2^63, so the
 * literal itself is compared (the gate has already said it is an integer literal).
 */
function seedOf(f: Reader): bigint | undefined {
  const v = f.integer('seed');
  if (v === undefined) return undefined;
  if (Math.abs(v) < 2 ** 53) return BigInt(v);
  const exact = BigInt(f.raw('seed')!);
  if (exact < I64_MIN || exact > I64_MAX) throw ApiError.badRequest(`\`seed\` must be a 64-bit integer from ${I64_MIN} to ${I64_MAX}, got ${exact}`, 'seed');
  return exact;
}

function inRange(name: string, v: number | undefined, lo: number, hi: number, loOpen = false): number | undefined {
  if (v === undefined) return v;
  if ((loOpen ? v <= lo : v < lo) || v > hi) {
    throw ApiError.badRequest(`\`${name}\` must be ${loOpen ? 'greater than' : 'at least'} ${lo} and at most ${hi}, got ${v}`, name);
  }
  return v;
}

function tokenIdList(f: Reader, name: 'stop_token_ids'): number[] | undefined {
  if (!f.array(name)) return undefined;
  const list = JSON.parse(f.raw(name)!) as unknown[];
  for (const v of list) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw ApiError.badRequest(`\`${name}\` must be an array of non-negative integer token ids`, name);
    }
  }
  return list as number[];
}

/** `stop` strings stay strings; token ids in `stop` join `stop_token_ids`. */
function stops(f: Reader): { stop: string[]; stopTokenIds?: number[] } {
  const s = readStop(f);
  const ids = tokenIdList(f, 'stop_token_ids');
  if (ids === undefined && s.tokenIds.length === 0) return { stop: s.strings, stopTokenIds: undefined };
  return { stop: s.strings, stopTokenIds: ids === undefined ? s.tokenIds : ids.concat(s.tokenIds) };
}

/** logit_bias: {"<token id>": bias}, bias in [-100, 100]. Ids are checked against the vocabulary by checkVocab(). */
function logitBias(f: Reader): Map<number, number> | undefined {
  const t = f.type('logit_bias');
  if (t === undefined || t === JsonType.Null) return undefined;
  if (t !== JsonType.Object) throw ApiError.badRequest('`logit_bias` must be an object mapping token ids to biases', 'logit_bias');
  const obj = JSON.parse(f.raw('logit_bias')!) as Record<string, unknown>;
  const out = new Map<number, number>();
  for (const [k, v] of Object.entries(obj)) {
    if (!/^(0|[1-9][0-9]{0,9})$/.test(k) || Number(k) > 0xffffffff) {
      throw ApiError.badRequest(`\`logit_bias\` keys must be token ids (non-negative integers as strings), got ${JSON.stringify(k)}`, 'logit_bias');
    }
    if (typeof v !== 'number' || !Number.isFinite(v)) throw ApiError.badRequest(`\`logit_bias[${JSON.stringify(k)}]\` must be a number`, 'logit_bias');
    if (v < -100 || v > 100) throw ApiError.badRequest(`\`logit_bias[${JSON.stringify(k)}]\` must be at least -100 and at most 100, got ${v}`, 'logit_bias');
    out.set(Number(k), v);
  }
  return out;
}

/**
 * allowed_token_ids / bad_words_token_ids: neither engine protocol (SGLang scheduler, vLLM
 * engine) has a field to carry them. Admission comes before validation (spec 000): any value
 * (valid or not) is the same `unsupported_parameter` 400, or, when the operator chose to
 * ignore unsupported fields, dropped unread. null is omission; an empty bad-words list asks
 * for nothing and is accepted.
 */
export function admitUndeliverable(f: Pick<Reader, 'given' | 'type' | 'array'>, ignoreUnsupported: boolean): void {
  if (ignoreUnsupported) return;
  const badWords = f.given('bad_words_token_ids') && !(f.type('bad_words_token_ids') === JsonType.Array && f.array('bad_words_token_ids')!.length === 0);
  const name = f.given('allowed_token_ids') ? 'allowed_token_ids' : badWords ? 'bad_words_token_ids' : undefined;
  if (name) {
    throw new ApiError(400, `\`${name}\` cannot be delivered: neither engine protocol (SGLang scheduler, vLLM engine) has a field that carries it`, {
      param: name,
      code: 'unsupported_parameter',
    });
  }
}

/** Chat: `logprobs` boolean and `top_logprobs` 0..20, which needs logprobs=true. */
export function readChatLogprobs(f: Pick<Fields<'logprobs' | 'top_logprobs'>, 'boolean' | 'integer'>): { logprobs?: boolean; topLogprobs?: number } {
  const logprobs = f.boolean('logprobs');
  const top = f.integer('top_logprobs');
  if (top !== undefined) {
    if (top < 0 || top > MAX_TOP_LOGPROBS) throw ApiError.badRequest(`\`top_logprobs\` must be at least 0 and at most ${MAX_TOP_LOGPROBS}, got ${top}`, 'top_logprobs');
    if (logprobs !== true) throw ApiError.badRequest('`top_logprobs` needs `logprobs` set to true', 'top_logprobs');
  }
  return { logprobs, topLogprobs: logprobs === true ? (top ?? 0) : undefined };
}

/** Completions: `logprobs` is the number of alternatives, 0..20 (0 = only the sampled token's). */
export function readCompletionLogprobs(f: Pick<Fields<'logprobs'>, 'integer'>): { logprobs?: boolean; topLogprobs?: number } {
  const k = f.integer('logprobs');
  if (k === undefined) return {};
  if (k < 0 || k > MAX_TOP_LOGPROBS) throw ApiError.badRequest(`\`logprobs\` must be at least 0 and at most ${MAX_TOP_LOGPROBS}, got ${k}`, 'logprobs');
  return { logprobs: true, topLogprobs: k };
}

/**
 * best_of (completions): candidates generated per prompt, ≥ n, at most 128; the n with the
 * highest cumulative logprob are returned (as vLLM's V0 engine did). Not with streaming,
 * and not with greedy sampling (every candidate would be the same). Returns n when absent.
 */
export function readBestOf(f: Pick<Fields<'best_of'>, 'integer'>, s: SamplingOptions, stream: boolean): number {
  const b = f.integer('best_of');
  if (b === undefined) return s.n;
  if (b < s.n) throw ApiError.badRequest(`\`best_of\` must be greater than or equal to \`n\` (${s.n}), got ${b}`, 'best_of');
  if (b > 128) throw ApiError.badRequest(`\`best_of\` must be at most 128, got ${b}`, 'best_of');
  if (b > s.n && stream) throw ApiError.badRequest(`\`best_of\` greater than \`n\` cannot be streamed (the best choices are known only at the end); got best_of ${b}, n ${s.n}`, 'best_of');
  if (b > 1 && s.temperature === 0) throw ApiError.badRequest('`best_of` greater than 1 needs a non-zero `temperature` (greedy sampling would give identical candidates)', 'best_of');
  return b;
}

/**
 * Checks that need the model: token ids in `logit_bias` and `stop_token_ids` (and `stop`)
 * must be inside its vocabulary. Run before any tokenization (pipeline/preprocess.ts
 * validateForModel).
 */
export function checkVocab(s: SamplingOptions, vocabSize: number): void {
  if (vocabSize <= 0) return;
  if (s.logitBias) {
    for (const id of s.logitBias.keys()) {
      if (id >= vocabSize) throw ApiError.badRequest(`\`logit_bias\` names token id ${id}, outside the vocabulary (size ${vocabSize})`, 'logit_bias');
    }
  }
  for (const id of s.stopTokenIds ?? []) {
    if (id >= vocabSize) throw ApiError.badRequest(`\`stop_token_ids\` (or \`stop\`) holds token id ${id}, outside the vocabulary (size ${vocabSize})`, 'stop_token_ids');
  }
}

/** The sampling fields, validated; admitUndeliverable() has run first (the readers call it after admit()). */
export function readSampling(f: Reader): SamplingOptions {
  const maxCompletion = f.integer('max_completion_tokens');
  const maxTokens = maxCompletion ?? f.integer('max_tokens');
  if (maxTokens !== undefined) {
    const name = maxCompletion !== undefined ? 'max_completion_tokens' : 'max_tokens';
    if (maxTokens <= 0) throw ApiError.badRequest(`\`${name}\` must be greater than 0, got ${maxTokens}`, name);
    integerIn(name, maxTokens, 1, U32_MAX, 'a 32-bit unsigned integer');
  }
  const n = f.integer('n') ?? 1;
  if (n < 1 || n > 128) throw ApiError.badRequest(`\`n\` must be at least 1 and at most 128, got ${n}`, 'n');
  const temperature = inRange('temperature', f.number('temperature'), 0, 2);
  if (n > 1 && temperature === 0) throw ApiError.badRequest('`n` greater than 1 needs a non-zero `temperature` (greedy sampling would give identical choices)', 'n');
  const topK = f.integer('top_k');
  if (topK !== undefined && topK < -1) throw ApiError.badRequest(`\`top_k\` must be -1 (disabled) or at least 1, got ${topK}`, 'top_k');
  integerIn('top_k', topK, -1, I32_MAX, 'a 32-bit integer');
  // 0 means disabled in vLLM; SGLang refuses it: the engines are told -1 (disabled)
  const topKNorm = topK === 0 ? -1 : topK;
  const detokenize = f.boolean('detokenize') ?? true;
  const stopSettings = stops(f);
  if (!detokenize && stopSettings.stop.length > 0) {
    throw ApiError.badRequest('stop strings (`stop`) need `detokenize` to be true; give stop token ids instead', 'detokenize');
  }
  const minTokens = f.integer('min_tokens');
  if (minTokens !== undefined && minTokens < 0) throw ApiError.badRequest(`\`min_tokens\` must be at least 0, got ${minTokens}`, 'min_tokens');
  integerIn('min_tokens', minTokens, 0, U32_MAX, 'a 32-bit unsigned integer');
  if (minTokens !== undefined && maxTokens !== undefined && minTokens > maxTokens) {
    throw ApiError.badRequest(`\`min_tokens\` (${minTokens}) must not exceed the maximum tokens (${maxTokens})`, 'min_tokens');
  }
  return {
    maxTokens,
    n,
    temperature,
    // (0, 1]: the engines refuse 0 (vLLM and SGLang check top_p > 0)
    topP: inRange('top_p', f.number('top_p'), 0, 1, true),
    topK: topKNorm,
    minP: inRange('min_p', f.number('min_p'), 0, 1),
    frequencyPenalty: inRange('frequency_penalty', f.number('frequency_penalty'), -2, 2),
    presencePenalty: inRange('presence_penalty', f.number('presence_penalty'), -2, 2),
    repetitionPenalty: inRange('repetition_penalty', f.number('repetition_penalty'), 0, 2, true),
    seed: seedOf(f),
    // Named, not spread: a spread in a literal makes V8 define every member after it through
    // a runtime call (~1 % of a lone request's CPU in a 100 req/s profile).
    stop: stopSettings.stop,
    stopTokenIds: stopSettings.stopTokenIds,
    includeStopStrInOutput: f.boolean('include_stop_str_in_output') ?? false,
    ignoreEos: f.boolean('ignore_eos'),
    minTokens,
    logitBias: logitBias(f),
    constraint: readConstraint(f),
    returnTokensAsTokenIds: f.boolean('return_tokens_as_token_ids') ?? false,
    detokenize,
  };
}

/** nvext.greed_sampling forces greedy decoding whatever the sampling fields say. */
export function withGreedy(s: SamplingOptions, nvext: { greedSampling: boolean }): SamplingOptions {
  if (!nvext.greedSampling) return s;
  if (s.n > 1) throw ApiError.badRequest('`nvext.greed_sampling` cannot be combined with `n` greater than 1 (every choice would be identical)', 'nvext.greed_sampling');
  return { ...s, temperature: 0, topP: 1, topK: -1, minP: 0 };
}
