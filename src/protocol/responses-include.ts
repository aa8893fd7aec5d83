// `include` on /v1/responses (and on GET /v1/responses/{id} and its input_items): the
// values Portico honours pass; OpenAI's others name outputs Portico has no source for
// (hosted tools, images) and are a 400 unsupported_parameter naming the
// value (dropped instead under PORTICO_IGNORE_UNSUPPORTED_FIELDS); anything else is a 400
// invalid_value.

import { ApiError } from './errors.js';
import type { Json } from './json.js';

/**
 * message.output_text.logprobs: the engine's per-token logprobs on output_text (top_logprobs
 * alternatives each). reasoning.encrypted_content has nothing to add (Portico's reasoning
 * items carry their text in `content`, and a client that keeps no server state sends them
 * back as they are); the others need hosted tools or images.
 */
export const OUTPUT_TEXT_LOGPROBS = 'message.output_text.logprobs';
export const HONOURED_INCLUDE: readonly string[] = [OUTPUT_TEXT_LOGPROBS];

const OPENAI_INCLUDE = new Set([
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  ...HONOURED_INCLUDE,
]);

export function readInclude(v: Json | undefined, ignoreUnsupported: boolean, param = 'include'): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw ApiError.badRequest(`\`${param}\` must be an array of strings`, param);
  const out: string[] = [];
  for (const x of v) {
    if (typeof x !== 'string') throw ApiError.badRequest(`\`${param}\` must be an array of strings`, param);
    if (HONOURED_INCLUDE.includes(x)) {
      if (!out.includes(x)) out.push(x);
    } else if (OPENAI_INCLUDE.has(x)) {
      if (!ignoreUnsupported) throw ApiError.badRequest(`\`${param}\` value ${JSON.stringify(x)} is not supported by Portico${HONOURED_INCLUDE.length > 0 ? ` (supported: ${HONOURED_INCLUDE.join(', ')})` : ' (it honours no include values)'}`, param, 'unsupported_parameter');
    } else {
      throw ApiError.badRequest(`\`${param}\` value ${JSON.stringify(x)} is not one of ${[...OPENAI_INCLUDE].join(', ')}`, param, 'invalid_value');
    }
  }
  return out;
}
