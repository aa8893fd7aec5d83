// Preprocessed images (native ImageProcessor output) → the engine's MultimodalInputs:
// one pixel tensor for all images (concatenated along dim 0), the model-specific
// tensors, one placeholder range and one content hash per image, and vLLM's field
// layout (how its servicer slices the tensors back into images).
//
// Qwen-VL: pixel_values [Σ patches, C·T·P·P] sliced by patches_per_image;
// image_grid_thw [N, 3] int64 (kept on the CPU, as vLLM's own processor keeps it).
// CLIP-style (LLaVA-1.5): pixel_values [N, 3, H, W], one row per image.

import type { EngineMultimodal, EngineTensor } from '../engine/types.js';
import type { ProcessedImage } from '../native/vision.js';

function int64(values: number[], shape: number[]): EngineTensor {
  return { data: new Uint8Array(BigInt64Array.from(values, BigInt).buffer), shape, dtype: 'int64' };
}

function concat(images: ProcessedImage[]): Uint8Array {
  if (images.length === 1) return images[0]!.pixelValues;
  return Buffer.concat(images.map((i) => i.pixelValues));
}

/**
 * `offsets[i]`: where image i's placeholder tokens start in the prompt ids; each runs for
 * `images[i].numTokens` ids of `imTokenId`.
 */
export function engineMultimodal(images: ProcessedImage[], offsets: number[], imTokenId: number): EngineMultimodal {
  if (images.length === 0 || images.length !== offsets.length) throw new Error(`${images.length} images for ${offsets.length} placeholders`);
  const placeholders = images.map((img, i) => ({ offset: offsets[i]!, length: img.numTokens }));
  const hashes = images.map((img) => img.hash);
  const first = images[0]!;
  if (first.gridThw) {
    const grids = images.map((img) => img.gridThw!);
    const patches = grids.map(([t, h, w]) => t! * h! * w!);
    return {
      pixelValues: { data: concat(images), shape: [patches.reduce((a, b) => a + b, 0), first.shape[1]!], dtype: 'float32' },
      modelTensors: [['image_grid_thw', int64(grids.flat(), [images.length, 3])], ['patches_per_image', int64(patches, [images.length])]],
      imTokenId,
      placeholders,
      hashes,
      batchedKeys: ['image_grid_thw', 'patches_per_image'],
      flatKeys: [['pixel_values', 'patches_per_image']],
      keepOnCpuKeys: ['image_grid_thw'],
    };
  }
  const shape = first.shape.join();
  if (images.some((img) => img.shape.join() !== shape)) throw new Error('CLIP-style images of different sizes');
  return {
    pixelValues: { data: concat(images), shape: [images.length, ...first.shape], dtype: 'float32' },
    modelTensors: [],
    imTokenId,
    placeholders,
    hashes,
    batchedKeys: ['pixel_values'],
    flatKeys: [],
    keepOnCpuKeys: [],
  };
}
