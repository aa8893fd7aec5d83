// For APIs whose messages are not in the chat-template shape (Anthropic Messages,
// OpenAI Responses): the reshaped messages and tools are written once into a small
// JSON buffer, so the native template reads them through spans like any chat body.

import type { Span } from './fields.js';
import type { ImageInput } from './image-input.js';

export interface TemplateBody {
  body: Buffer;
  messages: Span;
  tools: Span | null;
  useRawPrompt: boolean;
  addGenerationPrompt: boolean;
  /** A trailing assistant message (a prefill) the prompt ends with, or null. */
  continueFinal: string | null;
  templateKwargs: string | null;
  /** The reasoning effort in templateKwargs, for the parsing plan (the reader knows it; no reparse). */
  reasoningEffort: string | null;
  /** The request's images in prompt order; each left an image marker part in `messages`. */
  images: ImageInput[];
}

export function templateBody(messages: object[], tools: object[] | null, templateKwargs: string | null = null, reasoningEffort: string | null = null, continueFinal: string | null = null, images: ImageInput[] = []): TemplateBody {
  const msgJson = JSON.stringify(messages);
  const toolsJson = tools && tools.length > 0 ? JSON.stringify(tools) : null;
  const text = toolsJson ? `{"messages":${msgJson},"tools":${toolsJson}}` : `{"messages":${msgJson}}`;
  const body = Buffer.from(text);
  const start = Buffer.byteLength('{"messages":');
  const end = start + Buffer.byteLength(msgJson);
  const tools_ = toolsJson ? { start: end + Buffer.byteLength(',"tools":'), end: body.length - 1 } : null;
  return { body, messages: { start, end }, tools: tools_, useRawPrompt: false, addGenerationPrompt: continueFinal === null, continueFinal, templateKwargs, reasoningEffort, images };
}
