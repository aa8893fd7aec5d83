// Image parts as each API writes them, read into one form: the image's URL (`data:` or
// `http(s):`) and the request path that names the part in errors (`messages[2].content[1]`).
// Where an image was, the message keeps the marker part `{"type": "image"}`: the chat
// template places the model's image placeholder there (native/core messages.rs).
//
// OpenAI chat: `{"type": "image_url", "image_url": {"url": ..., "detail": ...}}` (vLLM also
// takes the URL as a bare string). Anthropic: `{"type": "image", "source": {"type":
// "base64", "media_type": ..., "data": ...} | {"type": "url", "url": ...}}`. Responses:
// `{"type": "input_image", "image_url": ..., "detail": ...}`.

import { ApiError } from './errors.js';
import type { Span } from './fields.js';
import { nativeChatImages } from '../native/vision.js';

export interface ImageInput {
  /** The request path of the part, for errors (`messages[0].content[1]`). */
  where: string;
  /** A `data:` or `http(s):` URL, decoded or fetched when the image is loaded. */
  url?: string;
  /** The image's bytes, already decoded from a `data:` URL off the event loop. */
  bytes?: Buffer;
  /** Why its `data:` URL could not be decoded (the client's error, reported in order). */
  error?: string;
}

/** What an image part becomes in the messages the template renders. */
export const IMAGE_MARKER = Object.freeze({ type: 'image' as const });

const DETAILS = new Set(['auto', 'low', 'high']);

/**
 * `detail` is accepted as OpenAI defines it and does not change preprocessing: the model's
 * own processor decides the resolution, as in vLLM and SGLang.
 */
function checkDetail(d: unknown, where: string): void {
  if (d === undefined || d === null) return;
  if (typeof d !== 'string' || !DETAILS.has(d)) throw ApiError.badRequest(`\`${where}.detail\` must be "auto", "low" or "high"`, `${where}.detail`);
}

/** A URL member: a non-empty string. */
function checkUrl(url: unknown, where: string): string {
  if (typeof url !== 'string' || url.length === 0) throw ApiError.badRequest(`\`${where}\` must be a non-empty URL string`, where);
  return url;
}

const IMAGE_URL_KEY = Buffer.from('"image_url"');

/**
 * The images of a chat request's messages, or null when it has none; only called for a
 * model that takes images (a text-only model refuses image parts in its template path).
 * The body is scanned here for `"image_url"` (a text chat costs one memchr-speed search and
 * no hop); a body that has it is read on libuv's pool, where `data:` URLs are decoded too:
 * the messages come back as JSON with each image part replaced by the marker.
 */
export async function chatImages(body: Buffer, messages: Span, maxBytes: number): Promise<{ messagesJson: Buffer; images: ImageInput[] } | null> {
  const at = body.indexOf(IMAGE_URL_KEY, messages.start);
  if (at < 0 || at >= messages.end) return null;
  const r = await nativeChatImages(body, messages.start, messages.end, maxBytes);
  if (r === null) return null;
  if (r.error !== null) throw ApiError.badRequest(r.error, r.param);
  const images = r.images.map((p): ImageInput => (p.data !== null ? { where: p.path, bytes: p.data } : p.url !== null ? { where: p.path, url: p.url } : { where: p.path, error: p.error ?? 'the image cannot be read' }));
  return { messagesJson: r.messages!, images };
}

/** An Anthropic image block's URL: a base64 source as a `data:` URL, or the url source's. */
export function anthropicImageUrl(block: Record<string, unknown>, where: string): string {
  const s = block.source as Record<string, unknown> | null | undefined;
  if (s === null || typeof s !== 'object') throw ApiError.badRequest(`\`${where}.source\` is required`, `${where}.source`);
  if (s.type === 'base64') {
    const mt = s.media_type;
    if (typeof mt !== 'string' || !/^image\/(jpeg|png|gif|webp)$/.test(mt)) {
      throw ApiError.badRequest(`\`${where}.source.media_type\` must be one of image/jpeg, image/png, image/gif, image/webp`, `${where}.source.media_type`);
    }
    if (typeof s.data !== 'string' || s.data.length === 0) throw ApiError.badRequest(`\`${where}.source.data\` must be a non-empty base64 string`, `${where}.source.data`);
    return `data:${mt};base64,${s.data}`;
  }
  if (s.type === 'url') return checkUrl(s.url, `${where}.source.url`);
  throw ApiError.badRequest(`\`${where}.source.type\` must be "base64" or "url"`, `${where}.source.type`);
}

/** A Responses `input_image` part's URL (`file_id` images are not served: no file store). */
export function responsesImageUrl(part: Record<string, unknown>, where: string): string {
  checkDetail(part.detail, where);
  if (part.image_url === undefined || part.image_url === null) {
    if (part.file_id !== undefined && part.file_id !== null) throw ApiError.badRequest(`\`${where}.file_id\`: images by file id are not supported; send \`image_url\` (an https or data URL)`, `${where}.file_id`);
    throw ApiError.badRequest(`\`${where}.image_url\` is required`, `${where}.image_url`);
  }
  return checkUrl(part.image_url, `${where}.image_url`);
}
