// The prompt token ids of a chat-style request: nvext.token_data as given (with a
// routed worker, tokenization is skipped), raw messages, or the rendered template.
// Also the SSE annotation events a client can ask for with nvext.annotations.

import { ApiError } from '../protocol/errors.js';
import type { NvExt } from '../protocol/nvext.js';
import { tokenizeChat, type TemplateInput } from '../pipeline/preprocess.js';
import type { ServedModel } from '../pipeline/served-model.js';

/** The prompt ids, or a promise of them when they are tokenized off the event loop. */
export function promptFor(model: ServedModel, body: Buffer, input: TemplateInput, nvext: NvExt): Uint32Array | Promise<Uint32Array> {
  if (nvext.tokenData && (nvext.backendInstanceId !== undefined || nvext.decodeWorkerId !== undefined)) {
    const vocab = model.info.vocabSize;
    for (const t of nvext.tokenData) {
      if (t >= vocab) throw ApiError.badRequest(`\`nvext.token_data\` holds token id ${t}, outside the vocabulary (size ${vocab})`, 'nvext.token_data');
    }
    if (nvext.tokenData.length === 0) throw ApiError.badRequest('`nvext.token_data` must not be empty', 'nvext.token_data');
    return nvext.tokenData;
  }
  return tokenizeChat(model, body, input);
}

/** `event: formatted_prompt` / `event: token_ids` SSE events, sent before the first chunk. */
export function annotationEvents(model: ServedModel, nvext: NvExt, promptIds: Uint32Array): string {
  let out = '';
  for (const a of nvext.annotations) {
    const data = a === 'formatted_prompt' ? JSON.stringify(model.native.decode(promptIds, false)) : JSON.stringify(Array.from(promptIds));
    out += `event: ${a}\ndata: ${data}\n\n`;
  }
  return out;
}
