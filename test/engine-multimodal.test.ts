// Preprocessed images on the engine wire, both protocols, against the mock engine, which
// checks what it receives (tensor sizes, placeholder ranges against the prompt, grids
// against ranges, hashes): the right wire generates, each kind of wrong wire is refused
// with INVALID_ARGUMENT naming what is wrong. Images are real (native processor output).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { EngineError } from '../src/engine/errors.js';
import { createEngineClient } from '../src/engine/factory.js';
import type { EngineClient, EngineMultimodal, GenerateParams } from '../src/engine/types.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { imageProcessorFromJson, type ProcessedImage } from '../src/native/vision.js';
import { engineMultimodal } from '../src/pipeline/multimodal.js';
import { collect } from './helpers/engine-events.js';
import { rgbPng } from './helpers/png.js';

const CONFIGS = fileURLToPath(new URL('../../test/fixtures/images/configs/', import.meta.url));
const VISION_START = 151652;
const IMAGE_PAD = 151655;
const VISION_END = 151653;
const EOS = 151645;
const never = () => new AbortController().signal;

const qwen = imageProcessorFromJson(readFileSync(`${CONFIGS}qwen2.5-vl.json`, 'utf8'));
const llava = imageProcessorFromJson(readFileSync(`${CONFIGS}llava-1.5.json`, 'utf8'));
const png = (w: number, h: number, seed: number) => rgbPng(w, h, (x, y) => [(x * seed) & 255, (y * 7) & 255, (x + y + seed) & 255]);

/** A Qwen-VL prompt: text ids, then per image <|vision_start|> pads <|vision_end|>. */
function qwenPrompt(images: ProcessedImage[]): { ids: Uint32Array; offsets: number[] } {
  const ids: number[] = [10, 11, 12];
  const offsets: number[] = [];
  for (const img of images) {
    ids.push(VISION_START);
    offsets.push(ids.length);
    for (let i = 0; i < img.numTokens; i++) ids.push(IMAGE_PAD);
    ids.push(VISION_END, 13);
  }
  return { ids: Uint32Array.from(ids), offsets };
}

const params = (inputIds: Uint32Array, multimodal: EngineMultimodal): GenerateParams => ({
  requestId: `mm-${Math.random().toString(36).slice(2)}`,
  inputIds,
  multimodal,
  maxNewTokens: 3,
  stream: true,
});

for (const protocol of ['sglang', 'vllm'] as const) {
  describe(`images on the ${protocol} wire`, () => {
    let mock: MockEngine;
    let client: EngineClient;
    let images: ProcessedImage[];
    before(async () => {
      mock = await startMockEngine({ port: 0, mode: 'sim', protocol, eosTokenIds: [EOS], vocabSize: 152_000, stepMs: 0, prefillMsPerToken: 0, eosProbability: 0 });
      client = createEngineClient(mock.url);
      images = await Promise.all([qwen.process(png(100, 60, 3)), qwen.process(png(40, 90, 5))]);
    });
    after(async () => {
      client.close();
      await mock.close();
    });

    const refused = async (ids: Uint32Array, mm: EngineMultimodal, why: RegExp) => {
      await assert.rejects(collect(client.generate(params(ids, mm), never())), (e: unknown) => {
        assert.ok(e instanceof EngineError, String(e));
        assert.equal(e.code, 'invalid_argument');
        assert.match(e.engineMessage, why);
        return true;
      });
    };

    test('two Qwen-VL images: the engine accepts and generates', async () => {
      const { ids, offsets } = qwenPrompt(images);
      const r = await collect(client.generate(params(ids, engineMultimodal(images, offsets, IMAGE_PAD)), never()));
      assert.equal(r.tokens.length, 3);
      assert.equal(r.done[0]!.promptTokens, ids.length);
    });

    test('one LLaVA-1.5 image (576 tokens): the engine accepts it', async () => {
      const img = await llava.process(png(500, 300, 9));
      assert.deepEqual(img.shape, [3, 336, 336]);
      const ids = Uint32Array.from([1, 2, ...Array(img.numTokens).fill(32000), 3]);
      const r = await collect(client.generate(params(ids, engineMultimodal([img], [2], 32000)), never()));
      assert.equal(r.tokens.length, 3);
    });

    test('a placeholder range one token off is refused', async () => {
      const { ids, offsets } = qwenPrompt(images);
      await refused(ids, engineMultimodal(images, [offsets[0]! - 1, offsets[1]!], IMAGE_PAD), /prompt\[\d+\] is 151652, not the image token/);
    });

    test('a prompt with fewer image tokens than the grid implies is refused', async () => {
      const { offsets } = qwenPrompt(images);
      const short = qwenPrompt([images[0]!, { ...images[1]!, numTokens: images[1]!.numTokens - 1 }]).ids;
      const mm = engineMultimodal(images, offsets, IMAGE_PAD);
      mm.placeholders[1]!.length -= 1;
      await refused(short, mm, /grid .* makes \d+ tokens, its placeholder has/);
    });

    test('image tokens outside every placeholder are refused', async () => {
      const { ids, offsets } = qwenPrompt(images);
      const mm = engineMultimodal([images[0]!], [offsets[0]!], IMAGE_PAD);
      await refused(ids, mm, /the prompt has \d+ image tokens, the placeholders cover/);
    });

    test('pixel bytes that do not fill the shape are refused', async () => {
      const { ids, offsets } = qwenPrompt(images);
      const mm = engineMultimodal(images, offsets, IMAGE_PAD);
      mm.pixelValues = { ...mm.pixelValues!, data: mm.pixelValues!.data.subarray(4) };
      await refused(ids, mm, /pixel_values: \d+ bytes for shape/);
    });

    test('a grid row count that is not the image count is refused', async () => {
      const { ids, offsets } = qwenPrompt(images);
      const mm = engineMultimodal(images, offsets, IMAGE_PAD);
      const grid = mm.modelTensors[0]![1];
      mm.modelTensors[0] = ['image_grid_thw', { ...grid, data: grid.data.subarray(0, 24), shape: [1, 3] }];
      await refused(ids, mm, /image_grid_thw: shape \[1,3\]/);
    });

    if (protocol === 'vllm') {
      test('vLLM: a missing content hash is refused', async () => {
        const { ids, offsets } = qwenPrompt(images);
        const mm = engineMultimodal(images, offsets, IMAGE_PAD);
        mm.hashes = mm.hashes.slice(1);
        await refused(ids, mm, /1 mm_hashes for 2 images/);
      });
      test('vLLM: a flat layout naming a tensor that was not sent is refused', async () => {
        const { ids, offsets } = qwenPrompt(images);
        const mm = engineMultimodal(images, offsets, IMAGE_PAD);
        mm.flatKeys = [['pixel_values', 'image_patch_counts']];
        await refused(ids, mm, /flat_keys sizes pixel_values by image_patch_counts/);
      });
    }
  });
}

test('identical image bytes hash the same; different bytes do not', async () => {
  const a = await qwen.process(png(64, 64, 1));
  const b = await qwen.process(png(64, 64, 1));
  const c = await qwen.process(png(64, 64, 2));
  assert.match(a.hash, /^[0-9a-f]{64}$/);
  assert.equal(a.hash, b.hash);
  assert.notEqual(a.hash, c.hash);
});
