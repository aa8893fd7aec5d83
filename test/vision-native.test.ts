// The native image processor through N-API: bad images reject with InvalidArg and a stable
// ERR_IMAGE_* code in the message (a 400 for the request that sent them), an unusable
// preprocessor config throws when the processor is made, and process() (libuv pool) gives
// what processSync() gives.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { imageProcessorFromJson } from '../src/native/vision.js';
import { rgbPng } from './helpers/png.js';

const CONFIGS = fileURLToPath(new URL('../../test/fixtures/images/configs/', import.meta.url));
const qwenJson = readFileSync(`${CONFIGS}qwen2.5-vl.json`, 'utf8');
const png = rgbPng(64, 48, (x, y) => [x * 4, y * 5, 100]);

const rejects = (p: Promise<unknown>, code: string) =>
  assert.rejects(p, (e: Error & { code?: string }) => e.code === 'InvalidArg' && e.message.startsWith(`${code}: `));

test('bad images reject with InvalidArg and their ERR_IMAGE_* code', async () => {
  const p = imageProcessorFromJson(qwenJson, null, { maxBytes: 100_000, maxPixels: 1_000_000 });
  await rejects(p.process(Buffer.from('definitely not an image')), 'ERR_IMAGE_UNSUPPORTED');
  await rejects(p.process(Buffer.alloc(0)), 'ERR_IMAGE_UNSUPPORTED');
  await rejects(p.process(png.subarray(0, png.length - 20)), 'ERR_IMAGE_DECODE');
  await rejects(p.process(Buffer.alloc(100_001)), 'ERR_IMAGE_TOO_LARGE');
  await rejects(p.process(rgbPng(2000, 600, () => [0, 0, 0])), 'ERR_IMAGE_TOO_LARGE');
  await rejects(p.process(rgbPng(1, 300, () => [0, 0, 0])), 'ERR_IMAGE_SHAPE');
  assert.throws(() => p.processSync(Buffer.from('GIF89a')), (e: Error & { code?: string }) => e.code === 'InvalidArg' && /^ERR_IMAGE_DECODE: /.test(e.message));
});

test('an unusable preprocessor config throws when the processor is made', () => {
  assert.throws(() => imageProcessorFromJson('{"image_processor_type":"SiglipImageProcessor"}'), (e: Error & { code?: string }) => e.code === 'GenericFailure' && /ERR_IMAGE_CONFIG: .*SiglipImageProcessor is not supported/.test(e.message));
  assert.throws(() => imageProcessorFromJson('{'), /ERR_IMAGE_CONFIG/);
});

test('process() on the pool equals processSync(); many at once all resolve', async () => {
  const p = imageProcessorFromJson(qwenJson);
  assert.equal(p.family, 'qwen_vl');
  const sync = p.processSync(png);
  const all = await Promise.all(Array.from({ length: 16 }, () => p.process(png)));
  for (const a of all) {
    assert.deepEqual(a.pixelValues, sync.pixelValues);
    assert.deepEqual([a.shape, a.gridThw, a.imageSize, a.numTokens, a.hash], [sync.shape, sync.gridThw, sync.imageSize, sync.numTokens, sync.hash]);
  }
  // 64x48 → smart_resize 56x56 (min_pixels 3136): a 4x4 patch grid, 4 tokens, rows of 3·2·14·14.
  assert.deepEqual(sync.gridThw, [1, 4, 4]);
  assert.deepEqual(sync.shape, [16, 1176]);
  assert.equal(sync.numTokens, 4);
  assert.deepEqual(sync.imageSize, [48, 64]);
  assert.equal(sync.pixelValues.length, 16 * 1176 * 4);
});
