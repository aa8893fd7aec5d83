// Sampling and length options shared by the generation endpoints: read from the
// request, range-checked, and handed to the engine untouched (backend-handled fields).

import { ApiError } from './errors.js';
import type { Fields } from './fields.js';
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
] as const;
export type SamplingField = (typeof SAMPLING_FIELDS)[number];

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
  seed?: number;
  stopTokenIds?: number[];
  /** Stop strings, applied by Portico's stop jail (the engine gets the token-level stops). */
  stop?: string[];
  includeStopStrInOutput?: boolean;
  ignoreEos?: boolean;
  minTokens?: number;
}

type Reader = Pick<Fields<SamplingField>, 'number' | 'integer' | 'boolean' | 'raw' | 'array' | 'type' | 'string'>;

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
  const all = [...(ids ?? []), ...s.tokenIds];
  return { stop: s.strings, stopTokenIds: ids === undefined && s.tokenIds.length === 0 ? undefined : all };
}

export function readSampling(f: Reader): SamplingOptions {
  const maxCompletion = f.integer('max_completion_tokens');
  const maxTokens = maxCompletion ?? f.integer('max_tokens');
  if (maxTokens !== undefined && maxTokens <= 0) {
    const name = maxCompletion !== undefined ? 'max_completion_tokens' : 'max_tokens';
    throw ApiError.badRequest(`\`${name}\` must be greater than 0, got ${maxTokens}`, name);
  }
  const n = f.integer('n') ?? 1;
  if (n < 1 || n > 128) throw ApiError.badRequest(`\`n\` must be at least 1 and at most 128, got ${n}`, 'n');
  const temperature = inRange('temperature', f.number('temperature'), 0, 2);
  if (n > 1 && temperature === 0) throw ApiError.badRequest('`n` greater than 1 needs a non-zero `temperature` (greedy sampling would give identical choices)', 'n');
  const topK = f.integer('top_k');
  if (topK !== undefined && topK < -1) throw ApiError.badRequest(`\`top_k\` must be -1 (disabled) or at least 1, got ${topK}`, 'top_k');
  const minTokens = f.integer('min_tokens');
  if (minTokens !== undefined && minTokens < 0) throw ApiError.badRequest(`\`min_tokens\` must be at least 0, got ${minTokens}`, 'min_tokens');
  if (minTokens !== undefined && maxTokens !== undefined && minTokens > maxTokens) {
    throw ApiError.badRequest(`\`min_tokens\` (${minTokens}) must not exceed the maximum tokens (${maxTokens})`, 'min_tokens');
  }
  return {
    maxTokens,
    n,
    temperature,
    topP: inRange('top_p', f.number('top_p'), 0, 1),
    topK,
    minP: inRange('min_p', f.number('min_p'), 0, 1),
    frequencyPenalty: inRange('frequency_penalty', f.number('frequency_penalty'), -2, 2),
    presencePenalty: inRange('presence_penalty', f.number('presence_penalty'), -2, 2),
    repetitionPenalty: inRange('repetition_penalty', f.number('repetition_penalty'), 0, 2, true),
    seed: f.integer('seed'),
    ...stops(f),
    includeStopStrInOutput: f.boolean('include_stop_str_in_output') ?? false,
    ignoreEos: f.boolean('ignore_eos'),
    minTokens,
  };
}

/** nvext.greed_sampling forces greedy decoding whatever the sampling fields say. */
export function withGreedy(s: SamplingOptions, nvext: { greedSampling: boolean }): SamplingOptions {
  if (!nvext.greedSampling) return s;
  if (s.n > 1) throw ApiError.badRequest('`nvext.greed_sampling` cannot be combined with `n` greater than 1 (every choice would be identical)', 'nvext.greed_sampling');
  return { ...s, temperature: 0, topP: 1, topK: -1, minP: 0 };
}
