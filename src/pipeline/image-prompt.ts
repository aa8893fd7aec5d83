// The prompt of a request with images. The template renders one placeholder per image (an
// image marker part for templates that loop over content, the model's placeholder text for
// templates that take a string); meanwhile each image is fetched and processed. Each
// placeholder token is then expanded to the number of tokens its image takes, and the
// engine is sent the images' tensors with the placeholder ranges (MultimodalInputs).
//
// The router sees the prompt with each image's run of placeholder tokens replaced by ids
// derived from the image's content hash (above the vocabulary; router/hash.ts
// imageRouteId): the same image at the same place gives the same block keys, so requests
// with the same image route together under KV routing, and two different images never look
// like a shared prefix. Engines that name the images of their stored blocks (vLLM's
// extra_keys) have those blocks keyed the same way (router/kv-ingest.ts).

import { ApiError } from '../protocol/errors.js';
import type { ImageInput } from '../protocol/image-input.js';
import type { EngineMultimodal } from '../engine/types.js';
import type { ProcessedImage } from '../native/vision.js';
import { MediaFetchError } from './media-fetch.js';
import { engineMultimodal } from './multimodal.js';
import type { VisionModel } from './vision-model.js';
import { imageRouteId } from '../router/hash.js';

export interface ImagePrompt {
  /** The prompt ids with each placeholder expanded. */
  ids: Uint32Array;
  multimodal: EngineMultimodal;
  /** `ids` with the images' runs replaced by their content-derived ids (routing only). */
  routeTokens: Uint32Array;
}

/**
 * The messages as the model's template takes them: for a template that takes a string, a
 * message with image markers becomes its images' placeholders, one per line, then its text
 * parts joined by newlines (vLLM's layout); a template that loops over parts keeps them.
 */
export function placeImages(vision: VisionModel, messages: unknown[]): unknown[] {
  if (vision.contentFormat === 'openai') return messages;
  return messages.map((m) => {
    const content = (m as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) return m;
    const marks: string[] = [];
    const texts: string[] = [];
    for (const p of content as { type?: unknown; text?: unknown }[]) {
      if (p !== null && typeof p === 'object' && p.type === 'image' && Object.keys(p).length === 1) marks.push(vision.placeholder);
      // Other parts go to the template as sent (it refuses what it cannot take).
      else if (p !== null && typeof p === 'object' && typeof p.text === 'string') texts.push(p.text);
      else if (typeof p === 'string') texts.push(p);
      else return m;
    }
    if (marks.length === 0) return m;
    return { ...(m as object), content: [...marks, ...texts].join('\n') };
  });
}

/** A client's image error as a 400 naming the part; anything else is the server's and passes. */
function imageError(err: unknown, where: string): unknown {
  if (err instanceof MediaFetchError) return ApiError.badRequest(`\`${where}\`: ${err.message}`, where, 'invalid_image_url');
  const e = err as { code?: unknown; message?: unknown };
  if (e?.code === 'InvalidArg' && typeof e.message === 'string') {
    return ApiError.badRequest(`\`${where}\`: the image cannot be used: ${e.message.replace(/^ERR_IMAGE_[A-Z_]+: /, '')}`, where, 'invalid_image');
  }
  return err;
}

/** The images' processing, started at once (before the template renders). */
export function processImages(vision: VisionModel, images: readonly ImageInput[]): Promise<ProcessedImage[]> {
  const max = vision.store.settings.maxPerRequest;
  if (images.length > max) {
    const where = images[max]!.where;
    throw ApiError.badRequest(`\`${where}\`: at most ${max} images per request`, where, 'too_many_images');
  }
  return Promise.all(images.map((im) => vision.store.image(vision, im).catch((err: unknown) => Promise.reject(imageError(err, im.where)))));
}

/** Rendered prompt ids + processed images → the expanded prompt, the engine's inputs and the routing ids. */
export function expandImages(vision: VisionModel, ids: Uint32Array, images: ProcessedImage[]): ImagePrompt {
  const tok = vision.imageTokenId;
  let count = 0;
  for (let i = ids.indexOf(tok); i >= 0; i = ids.indexOf(tok, i + 1)) count++;
  if (count !== images.length) {
    throw ApiError.badRequest(`the prompt holds ${count} image placeholder${count === 1 ? '' : 's'} (${vision.imageToken}) for ${images.length} image${images.length === 1 ? '' : 's'}: image placeholder text may not be written in a message`, 'messages', 'image_placeholder_mismatch');
  }
  let extra = 0;
  for (const im of images) extra += im.numTokens - 1;
  const out = new Uint32Array(ids.length + extra);
  const route = new Uint32Array(out.length);
  const offsets: number[] = [];
  let o = 0;
  let k = 0;
  for (let i = 0; i < ids.length; i++) {
    const t = ids[i]!;
    if (t !== tok) {
      out[o] = t;
      route[o++] = t;
      continue;
    }
    const im = images[k++]!;
    offsets.push(o);
    out.fill(tok, o, o + im.numTokens);
    for (let j = 0; j < im.numTokens; j++) route[o + j] = imageRouteId(im.hash, j);
    o += im.numTokens;
  }
  return { ids: out, multimodal: engineMultimodal(images, offsets, tok), routeTokens: route };
}

/** Renders (`render`) while the images are processed; the expanded prompt once both are done. */
export async function imagePrompt(vision: VisionModel, images: readonly ImageInput[], render: () => Uint32Array | Promise<Uint32Array>): Promise<ImagePrompt> {
  const processed = processImages(vision, images);
  // Both are awaited together: a failed render still settles (and ignores) the images.
  const [ids, done] = await Promise.all([Promise.resolve().then(render), processed]);
  return expandImages(vision, ids, done);
}
