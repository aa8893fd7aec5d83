// continue_final_message (vLLM's chat extension, spec 000): the final assistant message
// is left open for the model to continue, so the template is rendered without a
// generation prompt and cut after that message's text (pipeline/continued-prompt.ts).
// vLLM's rules: it cannot be combined with add_generation_prompt true, and (as Portico
// reads it, like Anthropic's prefill) the final message must be the assistant's.

import { ApiError } from './errors.js';

export interface PromptEnd {
  addGenerationPrompt: boolean;
  /** The final assistant message's text the prompt must end with, or null. */
  continueFinal: string | null;
}

/**
 * The prompt's end from the request's two flags. `messagesJson` (the messages array's
 * text) is parsed only when continue_final_message is true.
 */
export function readPromptEnd(continueFinal: boolean | undefined, addGenerationPrompt: boolean | undefined, messagesJson: () => string): PromptEnd {
  if (!continueFinal) return { addGenerationPrompt: addGenerationPrompt ?? true, continueFinal: null };
  if (addGenerationPrompt === true) {
    throw ApiError.badRequest('Cannot set both `continue_final_message` and `add_generation_prompt` to True.', 'continue_final_message');
  }
  const messages = JSON.parse(messagesJson()) as unknown[];
  const last = messages[messages.length - 1] as { role?: unknown; content?: unknown } | null;
  const at = `messages[${messages.length - 1}]`;
  if (!last || typeof last !== 'object' || last.role !== 'assistant') {
    throw ApiError.badRequest(`\`continue_final_message\` continues the final message, which must be the assistant's; ${at} has role ${JSON.stringify(last && typeof last === 'object' ? last.role : null)}`, 'continue_final_message');
  }
  const text = finalText(last.content);
  if (text === null || text.trim() === '') {
    throw ApiError.badRequest(`\`continue_final_message\` is set but ${at} has no text to continue`, `${at}.content`);
  }
  return { addGenerationPrompt: false, continueFinal: text };
}

/** A string content, or the last text part of a parts array (what transformers continues). */
function finalText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  for (let i = content.length - 1; i >= 0; i--) {
    const p = content[i] as { type?: unknown; text?: unknown } | null;
    if (p && typeof p === 'object' && typeof p.text === 'string') return p.text;
  }
  return null;
}
