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
  const toolsJson = tools && tools.length > 0 ? Buffer.from(JSON.stringify(tools)) : null;
  const spans = templateSpans(Buffer.from(JSON.stringify(messages)), toolsJson);
  return { ...spans, useRawPrompt: false, addGenerationPrompt: continueFinal === null, continueFinal, templateKwargs, reasoningEffort, images };
}

const HEAD = Buffer.from('{"messages":');
const TOOLS = Buffer.from(',"tools":');
const TAIL = Buffer.from('}');

/** `{"messages":M,"tools":T}` (or without tools) from the arrays' JSON, with the spans of both. */
export function templateSpans(messagesJson: Buffer, toolsJson: Buffer | null): { body: Buffer; messages: Span; tools: Span | null } {
  const end = HEAD.length + messagesJson.length;
  if (toolsJson === null) return { body: Buffer.concat([HEAD, messagesJson, TAIL]), messages: { start: HEAD.length, end }, tools: null };
  const t = end + TOOLS.length;
  return { body: Buffer.concat([HEAD, messagesJson, TOOLS, toolsJson, TAIL]), messages: { start: HEAD.length, end }, tools: { start: t, end: t + toolsJson.length } };
}
