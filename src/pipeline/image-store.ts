// Where a request's images come from: bytes by URL under the fetch policy (media-fetch.ts),
// then the model's processor on libuv's pool — unless the same image was processed for the
// same model recently. Two bounded caches:
//   - processed images by (model, SHA-256 of the encoded bytes), bounded in bytes of
//     tensors: the same picture sent again, inline or by URL, is not decoded again;
//   - remote URL → content hash, bounded in entries and kept URL_TTL_MS: the same URL
//     within that time is not fetched again (a URL's content may change; a hash never does).
// Concurrent requests for one image share one fetch and one processing.

import { createHash } from 'node:crypto';
import { DEFAULT_MEDIA_FETCH, fetchMedia, MediaFetchError, type MediaFetchPolicy } from './media-fetch.js';
import type { ImageInput } from '../protocol/image-input.js';
import type { ImageProcessor, ProcessedImage } from '../native/vision.js';

/** Whose images: a model's name (its cache namespace) and its processor. */
export interface ImageOwner {
  readonly key: string;
  readonly processor: ImageProcessor;
}

export interface ImageSettings {
  /** Fetching and decoding image URLs; its maxBytes is the limit of encoded bytes per image, however it came. */
  fetch: MediaFetchPolicy;
  /** Decoded width × height per image (decompression bombs are refused from the header). */
  maxPixels: number;
  /** Images per request. */
  maxPerRequest: number;
  /** Bytes of processed tensors kept; 0: no cache. */
  cacheBytes: number;
}

export const DEFAULT_IMAGE_SETTINGS: ImageSettings = {
  fetch: DEFAULT_MEDIA_FETCH,
  maxPixels: 64 << 20,
  maxPerRequest: 16,
  cacheBytes: 4 << 30,
};

/** How long a URL's content hash is trusted. */
const URL_TTL_MS = 5 * 60_000;
const MAX_URLS = 4096;
/** Below this, hashing on the event loop costs less than a hop to the thread pool. */
const SYNC_HASH_BYTES = 64 << 10;

async function sha256(bytes: Buffer): Promise<string> {
  if (bytes.length <= SYNC_HASH_BYTES) return createHash('sha256').update(bytes).digest('hex');
  return Buffer.from(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)).toString('hex');
}

export class ImageStore {
  private readonly processed = new Map<string, Promise<ProcessedImage>>();
  /** Tensor bytes of the settled entries of `processed`. */
  private bytes = 0;
  private readonly sizes = new Map<string, number>();
  private readonly urls = new Map<string, { hash: string; until: number }>();
  hits = 0;
  misses = 0;

  constructor(
    readonly settings: ImageSettings = DEFAULT_IMAGE_SETTINGS,
    /** Told of each image served: processed now, or from the cache (the images_total metric). */
    private readonly onImage: (model: string, source: 'processed' | 'cached') => void = () => {},
  ) {}

  /** The processed image of `input` for `model`; rejects with a MediaFetchError or the processor's client error. */
  async image(model: ImageOwner, input: ImageInput): Promise<ProcessedImage> {
    if (input.error !== undefined) throw new MediaFetchError(input.error);
    const url = input.url ?? '';
    const remote = input.bytes === undefined && !url.startsWith('data:');
    if (remote) {
      const known = this.urls.get(url);
      if (known !== undefined && known.until > Date.now()) {
        const hit = this.lookup(`${model.key}\u0000${known.hash}`, model.key);
        if (hit !== undefined) return hit;
      }
    }
    const bytes = input.bytes ?? (await fetchMedia(url, this.settings.fetch));
    const hash = await sha256(bytes);
    if (remote) this.rememberUrl(url, hash);
    const key = `${model.key}\u0000${hash}`;
    const hit = this.lookup(key, model.key);
    if (hit !== undefined) return hit;
    this.misses++;
    this.onImage(model.key, 'processed');
    const p = model.processor.process(bytes);
    if (this.settings.cacheBytes > 0) this.keep(key, p);
    return p;
  }

  private lookup(key: string, model: string): Promise<ProcessedImage> | undefined {
    const p = this.processed.get(key);
    if (p === undefined) return undefined;
    // Most recently used last.
    this.processed.delete(key);
    this.processed.set(key, p);
    this.hits++;
    this.onImage(model, 'cached');
    return p;
  }

  private keep(key: string, p: Promise<ProcessedImage>): void {
    this.processed.set(key, p);
    p.then(
      (img) => {
        if (this.processed.get(key) !== p) return;
        const size = img.pixelValues.length;
        this.sizes.set(key, size);
        this.bytes += size;
        this.evict();
      },
      () => {
        if (this.processed.get(key) === p) this.processed.delete(key);
      },
    );
  }

  private evict(): void {
    for (const key of this.processed.keys()) {
      if (this.bytes <= this.settings.cacheBytes) return;
      const size = this.sizes.get(key);
      // Still processing: in flight, not counted yet.
      if (size === undefined) continue;
      this.processed.delete(key);
      this.sizes.delete(key);
      this.bytes -= size;
    }
  }

  private rememberUrl(url: string, hash: string): void {
    this.urls.delete(url);
    this.urls.set(url, { hash, until: Date.now() + URL_TTL_MS });
    if (this.urls.size > MAX_URLS) this.urls.delete(this.urls.keys().next().value!);
  }

  /** Entries and tensor bytes held (the /metrics gauges and the tests). */
  stats(): { images: number; bytes: number; urls: number; hits: number; misses: number } {
    return { images: this.sizes.size, bytes: this.bytes, urls: this.urls.size, hits: this.hits, misses: this.misses };
  }
}
