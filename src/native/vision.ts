// The model's image processor (native/core `vision` via native/node): decode + resize +
// normalize + patchify, exact to transformers' PIL-backend processors (docs/images.md).
// `process` runs on libuv's thread pool; `processSync` is for tests and the bench.

import { nativeAddon } from './addon.js';

/** One preprocessed image. `pixelValues`: little-endian float32 of `shape`. */
export interface ProcessedImage {
  pixelValues: Buffer;
  /** Qwen-VL: [patches, C*T*P*P]; CLIP-style: [3, H, W]. */
  shape: number[];
  /** Qwen-VL's image_grid_thw row [t, h, w]; null for CLIP-style models. */
  gridThw: number[] | null;
  /** [height, width] of the decoded, oriented image. */
  imageSize: number[];
  /** Placeholder tokens the image expands to in the prompt. */
  numTokens: number;
  /** Hex SHA-256 of the encoded bytes. */
  hash: string;
}

export interface ImageProcessor {
  /** "qwen_vl" | "clip" */
  readonly family: string;
  process(bytes: Buffer): Promise<ProcessedImage>;
  processSync(bytes: Buffer): ProcessedImage;
}

/** One image part of a chat request, as the native reader returns it. */
export interface NativeImagePart {
  path: string;
  data: Buffer | null;
  url: string | null;
  error: string | null;
}

interface VisionAddon {
  chatImages(body: Uint8Array, start: number, end: number, maxBytes: number): Promise<{ messages: Buffer | null; images: NativeImagePart[]; error: string | null; param: string | null } | null>;
  ImageProcessor: {
    fromJson(configJson: string, visionPatchSize?: number | null, maxBytes?: number | null, maxPixels?: number | null): ImageProcessor;
  };
}

export interface ImageLimits {
  /** Encoded bytes per image. */
  maxBytes?: number;
  /** Decoded width × height per image. */
  maxPixels?: number;
}

/**
 * An image processor from preprocessor_config.json text. Throws (code "GenericFailure")
 * when the config cannot drive one; `process` rejects with code "InvalidArg" for a bad image.
 */
export function imageProcessorFromJson(configJson: string, visionPatchSize: number | null = null, limits: ImageLimits = {}): ImageProcessor {
  return (nativeAddon as VisionAddon).ImageProcessor.fromJson(configJson, visionPatchSize, limits.maxBytes ?? null, limits.maxPixels ?? null);
}

/**
 * The image parts of `body[start, end)` (a chat messages array), read and their `data:`
 * URLs decoded on libuv's pool: null without any; `error`/`param` for a part of the wrong
 * shape; else the messages JSON with each image replaced by the marker, and the images.
 */
export function nativeChatImages(body: Buffer, start: number, end: number, maxBytes: number) {
  return (nativeAddon as VisionAddon).chatImages(body, start, end, maxBytes);
}
