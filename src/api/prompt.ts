// The prompt token ids of a chat-style request: nvext.token_data as given (with a
// routed worker, tokenization is skipped), raw messages, or the rendered template.
// Also the SSE annotation events a client can ask for with nvext.annotations.

import { ApiError } from '../protocol/errors.js';
import type { NvExt } from '../protocol/nvext.js';
import { tokenizeChat, type TemplateInput } from '../pipeline/preprocess.js';
import type { ServedModel } from '../pipeline/served-model.js';
import type { VisionModel } from '../pipeline/vision-model.js';
import type { ImageInput } from '../protocol/image-input.js';
import { templateSpans } from '../protocol/template-body.js';
import { imagePrompt, placeImages, type ImagePrompt } from '../pipeline/image-prompt.js';

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

/**
 * The prompt of a request with images: the template input rewritten with the images placed
 * for the model's template (`messagesJson`: the request's messages with image markers, when
 * the caller has them; else those of the input's span), rendered while the images are
 * processed (image-prompt.ts).
 */
export function imagePromptFor(model: ServedModel, vision: VisionModel, body: Buffer, input: TemplateInput, images: readonly ImageInput[], messagesJson: Buffer | null): Promise<ImagePrompt> {
  if (input.useRawPrompt) throw ApiError.badRequest('`nvext.use_raw_prompt` cannot be used with images: they need the chat template', 'nvext.use_raw_prompt');
  let msgs = messagesJson;
  // A template that takes a string gets the placeholders written into the text.
  if (vision.contentFormat === 'string') {
    const parsed = JSON.parse((msgs ?? body.subarray(input.messages.start, input.messages.end)).toString('utf8')) as unknown[];
    msgs = Buffer.from(JSON.stringify(placeImages(vision, parsed)));
  }
  let b = body;
  let t = input;
  if (msgs !== null) {
    const spans = templateSpans(msgs, input.tools ? body.subarray(input.tools.start, input.tools.end) : null);
    b = spans.body;
    t = { ...input, messages: spans.messages, tools: spans.tools };
  }
  return imagePrompt(vision, images, () => tokenizeChat(model, b, t));
}

/** The model's image support, or a 400 naming the first image when it is text-only. */
export function visionOf(model: ServedModel, images: readonly ImageInput[]): VisionModel {
  if (model.vision !== null) return model.vision;
  const where = images[0]!.where;
  throw ApiError.badRequest(`\`${where}\`: model ${model.name} does not take image input`, where, 'image_input_unsupported');
}
