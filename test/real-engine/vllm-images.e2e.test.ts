// Preprocessed images against vLLM's real gRPC servicer (vLLM's CPU build, random weights
// on a tiny Qwen2.5-VL shape): Portico's native processor output, assembled into
// MultimodalInputs, reaches the vision tower and generates; the engine keys its encoder
// cache by Portico's content hash, so a wrong placeholder length for an image it has
// already encoded is refused by the engine itself, and the worker goes on serving.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { EngineError } from '../../src/engine/errors.js';
import { createEngineClient } from '../../src/engine/factory.js';
import type { EngineClient, GenerateParams } from '../../src/engine/types.js';
import { imageProcessorFromJson, type ProcessedImage } from '../../src/native/vision.js';
import { engineMultimodal } from '../../src/pipeline/multimodal.js';
import { ROOT } from '../helpers/portico.js';
import { collect } from '../helpers/engine-events.js';
import { rgbPng } from '../helpers/png.js';
import { skipWithoutVllm, startVllm, tinyQwen25VlDir, type VllmWorker } from '../helpers/vllm.js';

const skip = skipWithoutVllm();
const IM_START = 151644;
const IM_END = 151645;
const VISION_START = 151652;
const VISION_END = 151653;
const IMAGE_PAD = 151655;

let worker: VllmWorker;
let client: EngineClient;
let images: ProcessedImage[];

before(async () => {
  if (skip) return;
  worker = await startVllm({ modelDir: tinyQwen25VlDir(), name: 'tiny-vl', maxModelLen: 4096, args: ['--limit-mm-per-prompt', '{"image":2,"video":0}'] });
  client = createEngineClient(worker.url);
  const proc = imageProcessorFromJson(readFileSync(`${ROOT}test/fixtures/vllm-tiny-qwen2.5-vl/preprocessor_config.json`, 'utf8'));
  images = await Promise.all([
    proc.process(rgbPng(100, 60, (x, y) => [x & 255, y & 255, 7])),
    proc.process(rgbPng(40, 90, (x, y) => [y & 255, 3, x & 255])),
  ]);
});

after(async () => {
  client?.close();
  await worker?.kill('SIGKILL');
});

/** user turn with the images, then the assistant header; `short` drops one pad per image. */
function request(id: string, short = false): GenerateParams {
  const ids = [IM_START, 872, 198];
  const offsets: number[] = [];
  for (const img of images) {
    ids.push(VISION_START);
    offsets.push(ids.length);
    for (let i = 0; i < img.numTokens - (short ? 1 : 0); i++) ids.push(IMAGE_PAD);
    ids.push(VISION_END);
  }
  ids.push(IM_END, 198, IM_START, 77091, 198);
  const mm = engineMultimodal(images, offsets, IMAGE_PAD);
  if (short) for (const p of mm.placeholders) p.length -= 1;
  return { requestId: id, inputIds: Uint32Array.from(ids), multimodal: mm, maxNewTokens: 4, ignoreEos: true, stream: true };
}

test('two Qwen2.5-VL images: vLLM runs them through its vision tower and generates', { skip }, async () => {
  assert.deepEqual(images.map((i) => i.gridThw), [[1, 4, 8], [1, 6, 4]]);
  const p = request('vl-ok');
  const r = await collect(client.generate(p, new AbortController().signal));
  assert.equal(r.tokens.length, 4);
  assert.equal(r.done[0]!.promptTokens, p.inputIds.length);
  await worker.waitLog(/Generate request vl-ok: .*preprocessed_mm=True/);
});

test('a placeholder shorter than the image it stands for: the engine refuses, then serves again', { skip }, async () => {
  await assert.rejects(collect(client.generate(request('vl-short', true), new AbortController().signal)), (e: unknown) => e instanceof EngineError);
  // vLLM's own words: the cached encoder output (keyed by Portico's hash) has more embeddings than the placeholder.
  const m = await worker.waitLog(/Encoder cache entry for multimodal identifier '([0-9a-f]{64})' holds (\d+) embeddings, but request vl-short\S* input 0 expects (\d+)/);
  assert.equal(m[1], images[0]!.hash);
  assert.equal(Number(m[2]), images[0]!.numTokens);
  assert.equal(Number(m[3]), images[0]!.numTokens - 1);
  const again = await collect(client.generate(request('vl-again'), new AbortController().signal));
  assert.equal(again.tokens.length, 4);
});
