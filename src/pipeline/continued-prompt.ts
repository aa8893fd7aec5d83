// The rendered prompt cut after the final message's text, so nothing the template writes
// after it (end-of-turn token, newline, a next header) reaches the engine: the model goes
// on inside that message. The rule is transformers' apply_chat_template
// continue_final_message (which vLLM calls): the last occurrence of the text, stripped;
// its trailing whitespace is kept only when the template kept it.

import { ApiError } from '../protocol/errors.js';

export function continuedPrompt(rendered: string, final: string): string {
  const core = final.trim();
  const at = rendered.lastIndexOf(core);
  if (at < 0) {
    throw ApiError.badRequest('`continue_final_message` is set but the final message does not appear in the prompt the chat template rendered (the template rewrites or drops it)', 'continue_final_message');
  }
  const withTrailing = final.trimStart();
  if (rendered.startsWith(withTrailing, at)) return rendered.slice(0, at + withTrailing.length);
  return rendered.slice(0, at + core.length);
}
