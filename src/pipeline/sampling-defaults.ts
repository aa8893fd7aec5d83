// A model's sampling defaults: what a request that leaves temperature / top_p / top_k /
// min_p / repetition_penalty unset is sampled with. vLLM's rule (its
// `--generation-config auto`): the model's own generation_config.json values, not the
// OpenAI defaults 1 / 1 / -1. The engine's GetModelInfo answer comes first when it carries
// them (`default_sampling_params_json`, SGLang's `preferred_sampling_params`), then the
// folder's generation_config.json; a field in neither keeps the OpenAI default (the
// engine clients write 1 / 1 / -1 / 0 / 1 for it).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineModelInfo } from '../engine/types.js';

export interface SamplingDefaults {
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repetitionPenalty?: number;
  /**
   * The output length of a request that sets none (vLLM: generation_config's max_new_tokens,
   * its default_sampling_params max_tokens), still capped by what the context leaves.
   */
  maxTokens?: number;
}

/** JSON key → field, as generation_config.json, vLLM and SGLang name them. */
const KEYS: ReadonlyArray<[string, keyof SamplingDefaults]> = [
  ['temperature', 'temperature'],
  ['top_p', 'topP'],
  ['top_k', 'topK'],
  ['min_p', 'minP'],
  ['repetition_penalty', 'repetitionPenalty'],
];

/** The defaults an object holds (numbers only; anything else is left out). */
export function defaultsFrom(obj: unknown): SamplingDefaults {
  const out: SamplingDefaults = {};
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return out;
  for (const [key, field] of KEYS) {
    const v = (obj as Record<string, unknown>)[key];
    if (typeof v === 'number' && Number.isFinite(v)) out[field] = v;
  }
  // generation_config.json names it max_new_tokens; an engine's sampling defaults, max_tokens.
  const o = obj as Record<string, unknown>;
  const max = o.max_tokens ?? o.max_new_tokens;
  if (typeof max === 'number' && Number.isSafeInteger(max) && max >= 1) out.maxTokens = max;
  return out;
}

/** generation_config.json's defaults (its keys as they are, as vLLM reads them; `do_sample` is not consulted). */
export function fileSamplingDefaults(dir: string): SamplingDefaults {
  let text: string;
  try {
    text = readFileSync(join(dir, 'generation_config.json'), 'utf8');
  } catch {
    return {};
  }
  // Model.load has already parsed this file (a malformed one is a startup error there).
  return defaultsFrom(JSON.parse(text));
}

/** The engine's defaults: default_sampling_params_json, then preferred_sampling_params. */
export function engineSamplingDefaults(info: EngineModelInfo, warn: (why: string) => void): SamplingDefaults {
  const parse = (field: string, text: string | undefined): SamplingDefaults => {
    if (!text) return {};
    try {
      return defaultsFrom(JSON.parse(text));
    } catch {
      warn(`GetModelInfo ${field} is not JSON; ignored`);
      return {};
    }
  };
  return mergeDefaults(parse('default_sampling_params_json', info.defaultSamplingParamsJson), parse('preferred_sampling_params', info.preferredSamplingParams));
}

/** Field by field, the first source that has it. */
export function mergeDefaults(first: SamplingDefaults, then: SamplingDefaults): SamplingDefaults {
  return { ...then, ...first };
}
