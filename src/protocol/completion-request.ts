// The legacy completions request (POST /v1/completions): a prompt given as a string,
// an array of strings, token ids, or arrays of token ids. Each prompt is its own
// generation; n choices are generated for every prompt.

import { ApiError } from './errors.js';
import { requireModel } from './model-field.js';
import { admit } from './admission.js';
import { Fields, FieldTable, JsonType } from './fields.js';
import { readStream, type StreamSettings } from './stream-options.js';
import { readNvext, type NvExt } from './nvext.js';
import { readBestOf, readCompletionLogprobs, readSampling, withGreedy, SAMPLING_FIELDS, type SamplingOptions } from './sampling.js';

const COMPLETION_FIELDS = [
  'model',
  'prompt',
  'stream',
  'stream_options',
  'echo',
  'add_special_tokens',
  'skip_special_tokens',
  'user',
  'nvext',
  'cache_salt',
  'logprobs',
  'best_of',
  ...SAMPLING_FIELDS,
] as const;
type CompletionField = (typeof COMPLETION_FIELDS)[number];

let table: FieldTable<CompletionField> | null = null;

/** OpenAI's default completion length for /v1/completions. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;

export type Prompt = { kind: 'text'; text: string } | { kind: 'ids'; ids: Uint32Array };

export interface CompletionRequest extends StreamSettings {
  model: string;
  prompts: Prompt[];
  echo: boolean;
  addSpecialTokens: boolean;
  skipSpecialTokens: boolean;
  nvext: NvExt;
  sampling: SamplingOptions;
  /** Candidates generated per prompt (≥ n); the n best by cumulative logprob are returned. */
  bestOf: number;
}

export function readCompletionRequest(body: Buffer, ignoreUnsupported: boolean, header: (name: string) => string): CompletionRequest {
  table ??= new FieldTable(COMPLETION_FIELDS);
  const f = Fields.scan(body, table);
  admit(f.unknown, '', ignoreUnsupported);

  const model = requireModel(f);

  const prompts = readPrompts(f);
  const streamSettings = readStream(f, ignoreUnsupported);
  const nvext = readNvext(f, header, f.string('cache_salt'));
  if (f.given('user')) f.string('user');
  const sampling = { ...withGreedy(readSampling(f, ignoreUnsupported), nvext), ...readCompletionLogprobs(f) };
  const bestOf = readBestOf(f, sampling, streamSettings.stream);
  return {
    model,
    prompts,
    ...streamSettings,
    echo: f.boolean('echo') ?? false,
    addSpecialTokens: f.boolean('add_special_tokens') ?? true,
    skipSpecialTokens: f.boolean('skip_special_tokens') ?? true,
    nvext,
    sampling: { ...sampling, maxTokens: sampling.maxTokens ?? DEFAULT_COMPLETION_MAX_TOKENS },
    bestOf,
  };
}

function readPrompts(f: Fields<CompletionField>): Prompt[] {
  const t = f.type('prompt');
  if (t === undefined || t === JsonType.Null) throw ApiError.badRequest('`prompt` is required', 'prompt');
  if (t === JsonType.String) {
    const text = f.string('prompt')!;
    if (text === '') throw ApiError.badRequest('`prompt` must not be empty', 'prompt');
    return [{ kind: 'text', text }];
  }
  if (t !== JsonType.Array) throw ApiError.badRequest('`prompt` must be a string, an array of strings, an array of token ids, or an array of token id arrays', 'prompt');
  const list = JSON.parse(f.raw('prompt')!) as unknown[];
  if (list.length === 0) throw ApiError.badRequest('`prompt` must not be empty', 'prompt');
  if (list.every((v) => typeof v === 'number')) return [{ kind: 'ids', ids: tokenIds(list, 'prompt') }];
  return list.map((p, i): Prompt => {
    const name = `prompt[${i}]`;
    if (typeof p === 'string') {
      if (p === '') throw ApiError.badRequest(`\`${name}\` must not be empty`, 'prompt');
      return { kind: 'text', text: p };
    }
    if (Array.isArray(p)) {
      if (p.length === 0) throw ApiError.badRequest(`\`${name}\` must not be empty`, 'prompt');
      return { kind: 'ids', ids: tokenIds(p, name) };
    }
    throw ApiError.badRequest(`\`${name}\` must be a string or an array of token ids`, 'prompt');
  });
}

function tokenIds(list: unknown[], name: string): Uint32Array {
  const ids = new Uint32Array(list.length);
  list.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw ApiError.badRequest(`\`${name}\` must hold non-negative integer token ids; item ${i} is ${JSON.stringify(v)}`, 'prompt');
    }
    ids[i] = v;
  });
  return ids;
}
