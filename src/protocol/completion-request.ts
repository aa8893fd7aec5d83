// The legacy completions request (POST /v1/completions): a prompt given as a string,
// an array of strings, token ids, or arrays of token ids. Each prompt is its own
// generation; n choices are generated for every prompt.

import { requireModel } from './model-field.js';
import { admit } from './admission.js';
import { Fields, FieldTable } from './fields.js';
import { readStream, type StreamSettings } from './stream-options.js';
import { readNvext, type NvExt } from './nvext.js';
import { readTextOrIds, type TextOrIds } from './text-or-ids.js';
import { admitUndeliverable, readBestOf, readCompletionLogprobs, readSampling, withGreedy, SAMPLING_FIELDS, type SamplingOptions } from './sampling.js';

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

/**
 * Prompts in one batch: each is its own generation (times n or best_of), so the batch is an
 * amplifier; the bound is OpenAI's batch bound for embeddings inputs.
 */
export const MAX_COMPLETION_PROMPTS = 2048;

/** OpenAI's default completion length for /v1/completions. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;

export type Prompt = TextOrIds;

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
  admitUndeliverable(f, ignoreUnsupported);

  const model = requireModel(f);

  const prompts = readTextOrIds(f, 'prompt', MAX_COMPLETION_PROMPTS);
  const streamSettings = readStream(f, ignoreUnsupported);
  const nvext = readNvext(f, header, f.string('cache_salt'), undefined, ignoreUnsupported);
  if (f.given('user')) f.string('user');
  const sampling = { ...withGreedy(readSampling(f), nvext), ...readCompletionLogprobs(f) };
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

