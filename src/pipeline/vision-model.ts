// A model that takes images: its image processor (from preprocessor_config.json), the
// token its images expand to in the prompt, and what a template that takes text only is
// given for each image. Read from the model folder when the model is loaded: a folder
// whose config.json has a `vision_config` and which holds preprocessor_config.json.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Model } from '../native/core.js';
import { imageProcessorFromJson, type ImageProcessor } from '../native/vision.js';
import type { ImageStore } from './image-store.js';

export interface VisionModel {
  /** Names the model's images in the shared cache (its processor's output is its own). */
  readonly key: string;
  readonly processor: ImageProcessor;
  /** The token each image's placeholder run is made of (Qwen-VL `<|image_pad|>`, LLaVA `<image>`). */
  readonly imageTokenId: number;
  readonly imageToken: string;
  /**
   * "openai": the template loops over content parts and places an image marker itself;
   * "string": each image becomes `placeholder` on its own line before the message's text
   * (vLLM's rule for such templates).
   */
  readonly contentFormat: 'openai' | 'string';
  readonly placeholder: string;
  /** Fetching, limits and the processed-image cache (shared by every model). */
  readonly store: ImageStore;
}

/** Qwen-VL models wrap the image token in vision start/end tokens; others use it alone. */
const WRAPPED = /^qwen[0-9.]*_(5_)?vl/;

/** The model's vision support, or null for a text-only model. Throws when the folder's configs cannot drive a processor. */
export function loadVisionModel(name: string, dir: string | undefined, native: Model, store: ImageStore): VisionModel | null {
  if (dir === undefined) return null;
  const cfgPath = join(dir, 'config.json');
  const ppPath = join(dir, 'preprocessor_config.json');
  if (!existsSync(cfgPath) || !existsSync(ppPath)) return null;
  const cfg = JSON.parse(readFileSync(cfgPath, 'utf8')) as Record<string, unknown>;
  const vision = cfg.vision_config as Record<string, unknown> | undefined;
  if (vision === undefined || vision === null || typeof vision !== 'object') return null;
  const fail = (why: string) => new Error(`model ${name} (${dir}): ${why}`);
  const id = (cfg.image_token_id ?? cfg.image_token_index) as unknown;
  if (typeof id !== 'number' || !Number.isInteger(id)) throw fail('config.json names no image_token_id (or image_token_index)');
  const token = native.idToToken(id);
  if (token === null) throw fail(`image token id ${id} is not in the tokenizer's vocabulary`);
  const patch = typeof vision.patch_size === 'number' ? vision.patch_size : null;
  let processor: ImageProcessor;
  try {
    processor = imageProcessorFromJson(readFileSync(ppPath, 'utf8'), patch, { maxBytes: store.settings.fetch.maxBytes, maxPixels: store.settings.maxPixels });
  } catch (err) {
    throw fail(`preprocessor_config.json: ${(err as Error).message}`);
  }
  const modelType = typeof cfg.model_type === 'string' ? cfg.model_type : '';
  let placeholder = token;
  if (WRAPPED.test(modelType)) {
    const start = native.idToToken(cfg.vision_start_token_id as number);
    const end = native.idToToken(cfg.vision_end_token_id as number);
    if (start === null || end === null) throw fail('config.json names no vision_start_token_id / vision_end_token_id in the vocabulary');
    placeholder = `${start}${token}${end}`;
  }
  const format = native.info().contentFormat;
  return { key: name, processor, imageTokenId: id, imageToken: token, contentFormat: format === 'openai' ? 'openai' : 'string', placeholder, store };
}
