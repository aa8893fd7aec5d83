// previous_response_id: the stored chain's items (each response's input items, then its
// output items: messages, reasoning, function calls and their outputs) become the
// conversation before the new input, read by the same item rules as `input`. The chain's
// `instructions` are not inherited (OpenAI's rule): only this request's become the system
// message. Reasoning items become the assistant turn's reasoning_content; the template
// decides which past turns keep it.

import type { Json, JsonObject as Obj } from './json.js';
import { templateBody, type TemplateBody } from './template-body.js';
import { appendItem, type ResponsesRequest } from './responses-request.js';
import type { ImageInput } from './image-input.js';

/** The prompt of `req` with `history` (the chain's items, oldest first) before its input. */
export function conversationPrompt(req: ResponsesRequest, history: readonly Json[]): TemplateBody {
  const messages: Obj[] = [];
  const images: ImageInput[] = [];
  if (req.instructions !== null) messages.push({ role: 'system', content: req.instructions });
  history.forEach((item, i) => appendItem(messages, item, i, images, `previous_response_id's item ${i}`));
  req.input.forEach((item, i) => appendItem(messages, item, i, images));
  return templateBody(messages, req.template.tools, req.template.kwargs, null, null, images);
}
