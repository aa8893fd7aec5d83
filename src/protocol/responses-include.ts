// `include` on /v1/responses (and on GET /v1/responses/{id} and its input_items): the
// values Portico honours pass; OpenAI's others name outputs Portico has no source for
// (hosted tools, images, logprobs on this API) and are a 400 unsupported_parameter naming the
// value (dropped instead under PORTICO_IGNORE_UNSUPPORTED_FIELDS); anything else is a 400
// invalid_value.

import { ApiError } from './errors.js';
import type { Json } from './json.js';

/**
 * reasoning.encrypted_content: reasoning items carry their text in `encrypted_content` too
 * (an opaque token that only Portico reads back), so a client that keeps no server state
 * (store: false) can send the reasoning back in the next request's input.
 */
export const HONOURED_INCLUDE = ['reasoning.encrypted_content'] as const;

const OPENAI_INCLUDE = new Set([
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'message.output_text.logprobs',
  ...HONOURED_INCLUDE,
]);

export function readInclude(v: Json | undefined, ignoreUnsupported: boolean, param = 'include'): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw ApiError.badRequest(`\`${param}\` must be an array of strings`, param);
  const out: string[] = [];
  for (const x of v) {
    if (typeof x !== 'string') throw ApiError.badRequest(`\`${param}\` must be an array of strings`, param);
    if ((HONOURED_INCLUDE as readonly string[]).includes(x)) {
      if (!out.includes(x)) out.push(x);
    } else if (OPENAI_INCLUDE.has(x)) {
      if (!ignoreUnsupported) throw ApiError.badRequest(`\`${param}\` value ${JSON.stringify(x)} is not supported by Portico (supported: ${HONOURED_INCLUDE.join(', ')})`, param, 'unsupported_parameter');
    } else {
      throw ApiError.badRequest(`\`${param}\` value ${JSON.stringify(x)} is not one of ${[...OPENAI_INCLUDE].join(', ')}`, param, 'invalid_value');
    }
  }
  return out;
}
