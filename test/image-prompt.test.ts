// The image prompt's pure parts: reading chat image parts, placing images for string and
// part templates, expanding placeholders (ranges, counts, refusals), the routing ids
// (the same image gives the same block keys, different images never do), and the image
// store's caches (hits, in-flight sharing, byte-bounded eviction, failures not kept).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chatImages, IMAGE_MARKER } from '../src/protocol/image-input.js';
import { ApiError } from '../src/protocol/errors.js';
import { expandImages, placeImages } from '../src/pipeline/image-prompt.js';
import type { VisionModel } from '../src/pipeline/vision-model.js';
import { ImageStore, DEFAULT_IMAGE_SETTINGS } from '../src/pipeline/image-store.js';
import type { ImageProcessor, ProcessedImage } from '../src/native/vision.js';
import { blockKeys, imageBlockTokens, rootLanes } from '../src/router/hash.js';
import { encode } from '@msgpack/msgpack';
import { create } from '@bufbuild/protobuf';
import { KvEventBatchSchema } from '../src/gen/common_pb.js';
import { decodeVllmBatch, normaliseBatch } from '../src/engine/kv-events/index.js';

const PAD = 7;
const image = (hash: string, numTokens: number): ProcessedImage => ({
  pixelValues: Buffer.alloc(numTokens * 16),
  shape: [numTokens * 4, 4],
  gridThw: [1, 2, numTokens * 2],
  imageSize: [28, 28],
  numTokens,
  hash,
});

function vision(format: 'openai' | 'string', processor?: ImageProcessor, store = new ImageStore()): VisionModel {
  return { key: 'm', processor: processor ?? ({} as ImageProcessor), imageTokenId: PAD, imageToken: '<pad>', contentFormat: format, placeholder: '<s><pad></s>', store };
}

test('chat image parts (read on the pool): found only when present, replaced by markers, data: URLs decoded, refused when malformed', async () => {
  const body = (messages: unknown) => {
    const text = JSON.stringify({ model: 'm', messages });
    const start = text.indexOf('"messages":') + 11;
    return { buf: Buffer.from(text), span: { start, end: text.length - 1 } };
  };
  const plain = body([{ role: 'user', content: 'say "image_url" please' }]);
  assert.equal(await chatImages(plain.buf, plain.span, 1000), null);
  const two = body([{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAEC' } }, { type: 'image_url', image_url: 'data:,x' }] }, { role: 'user', content: [{ type: 'image_url', image_url: 'https://h/i.png' }] }]);
  const got = (await chatImages(two.buf, two.span, 1000))!;
  assert.deepEqual(got.images, [{ where: 'messages[0].content[1]', bytes: Buffer.from([0, 1, 2]) }, { where: 'messages[0].content[2]', error: 'a data: URL image must be base64 (";base64,")' }, { where: 'messages[1].content[0]', url: 'https://h/i.png' }]);
  const msgs = JSON.parse(got.messagesJson.toString()) as { content: unknown[] }[];
  assert.deepEqual(msgs[0]!.content, [{ type: 'text', text: 'a' }, IMAGE_MARKER, IMAGE_MARKER]);
  const bad = body([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 3 } }] }]);
  await assert.rejects(chatImages(bad.buf, bad.span, 1000), (e: unknown) => e instanceof ApiError && e.status === 400 && e.param === 'messages[0].content[0].image_url.url');
});

test('placing images: a string template gets placeholders on their own lines before the text; a part template keeps the markers', () => {
  const msgs = [{ role: 'system', content: 'sys' }, { role: 'user', content: [{ type: 'text', text: 'a' }, IMAGE_MARKER, { type: 'text', text: 'b' }, IMAGE_MARKER] }];
  assert.deepEqual(placeImages(vision('string'), msgs), [{ role: 'system', content: 'sys' }, { role: 'user', content: '<s><pad></s>\n<s><pad></s>\na\nb' }]);
  assert.equal(placeImages(vision('openai'), msgs), msgs);
});

test('expansion: each placeholder becomes its image\'s run; the offsets and lengths are the engine\'s ranges', () => {
  const v = vision('string');
  const ids = Uint32Array.from([1, 2, PAD, 3, PAD, 4]);
  const r = expandImages(v, ids, [image('aa'.repeat(32), 3), image('bb'.repeat(32), 2)]);
  assert.deepEqual(Array.from(r.ids), [1, 2, PAD, PAD, PAD, 3, PAD, PAD, 4]);
  assert.deepEqual(r.multimodal.placeholders, [{ offset: 2, length: 3 }, { offset: 6, length: 2 }]);
  assert.deepEqual(r.multimodal.hashes, ['aa'.repeat(32), 'bb'.repeat(32)]);
  // Text ids route as themselves; image runs as ids above the vocabulary.
  assert.deepEqual([r.routeTokens[0], r.routeTokens[1], r.routeTokens[5], r.routeTokens[8]], [1, 2, 3, 4]);
  assert.ok([2, 3, 4, 6, 7].every((i) => r.routeTokens[i]! >= 0x80000000));
  assert.throws(() => expandImages(v, ids, [image('aa'.repeat(32), 3)]), (e: unknown) => e instanceof ApiError && e.status === 400 && /2 image placeholders .* for 1 image/.test(e.message));
  assert.throws(() => expandImages(v, Uint32Array.from([1, 2]), [image('aa'.repeat(32), 3)]), /0 image placeholders/);
});

test('routing ids: the same image gives the same block keys; a different image of the same size does not', () => {
  const v = vision('string');
  const prompt = Uint32Array.from([...Array.from({ length: 20 }, (_, i) => i + 10), PAD, 99]);
  const keys = (hash: string) => Array.from(blockKeys(expandImages(v, prompt, [image(hash, 40)]).routeTokens, 16, rootLanes()));
  const x1 = keys('1234abcd'.repeat(8));
  const x2 = keys('1234abcd'.repeat(8));
  const y = keys('9876fedc'.repeat(8));
  assert.deepEqual(x1, x2);
  // Block 0 is text only (shared); every block that covers the image differs.
  assert.equal(x1[0], y[0]);
  assert.ok(x1.slice(1).every((k, i) => k !== y[i + 1]));
});

test('the image store: a repeat is a cache hit, concurrent requests share one processing, a failure is not kept, bytes bound the cache', async () => {
  let calls = 0;
  const fail = new Set<string>();
  const processor: ImageProcessor = {
    family: 'qwen_vl',
    processSync: () => assert.fail('not on the loop'),
    process: async (bytes: Buffer) => {
      calls++;
      await new Promise((r) => setImmediate(r));
      if (fail.has(bytes.toString())) throw Object.assign(new Error('ERR_IMAGE_DECODE: broken'), { code: 'InvalidArg' });
      return image(bytes.toString('hex').padEnd(64, '0'), 4);
    },
  };
  // Room for two images' tensors (64 bytes each).
  const store = new ImageStore({ ...DEFAULT_IMAGE_SETTINGS, cacheBytes: 128 });
  const v = vision('openai', processor, store);
  const url = (s: string) => ({ where: 'messages[0].content[0]', url: `data:image/png;base64,${Buffer.from(s).toString('base64')}` });
  const [a1, a2] = await Promise.all([store.image(v, url('a')), store.image(v, url('a'))]);
  assert.equal(calls, 1);
  assert.equal(a1, a2);
  await store.image(v, url('a'));
  assert.equal(calls, 1);
  await store.image(v, url('b'));
  await store.image(v, url('c'));
  assert.equal(calls, 3);
  assert.deepEqual({ images: store.stats().images, bytes: store.stats().bytes }, { images: 2, bytes: 128 });
  // 'a' was the least recently used: evicted, processed again.
  await store.image(v, url('a'));
  assert.equal(calls, 4);
  fail.add('d');
  await assert.rejects(store.image(v, url('d')), /broken/);
  await assert.rejects(store.image(v, url('d')), /broken/);
  assert.equal(calls, 6, 'a failed image is processed again, not cached');
});

test('engine events that name their images key those blocks as the request does: vLLM extra_keys in msgpack and in the gRPC event stream', () => {
  const v = vision('string');
  const A = 'ab12cd34'.repeat(8);
  const B = 'fe98dc76'.repeat(8);
  // Text, image A (20 tokens), one text token, image B (11 tokens), text: 48 tokens, 3 blocks of 16.
  const prompt = Uint32Array.from([1, 2, 3, PAD, 4, PAD, ...Array.from({ length: 26 }, (_, i) => 100 + i)]);
  const r = expandImages(v, prompt, [image(A, 20), image(B, 11)]);
  assert.equal(r.ids.length, 32 + 29);
  const bs = 16;
  const placed = r.multimodal.placeholders;
  // vLLM's rule: a block lists (identifier, image offset - block start) for each image it overlaps.
  const blocks = Array.from({ length: Math.floor(r.ids.length / bs) }, (_, b) => {
    const start = b * bs;
    const keys = placed.flatMap((p, k) => (p.offset < start + bs && p.offset + p.length > start ? [[[A, B][k]!, p.offset - start]] : []));
    return { tokens: Array.from(r.ids.slice(start, start + bs)), keys };
  });
  const batch = encode([1.5, [['BlockStored', [11, 12, 13], null, blocks.flatMap((b) => b.tokens), bs, null, 'GPU', null, blocks.map((b) => (b.keys.length ? b.keys : null))]]]);
  const [ev] = decodeVllmBatch(batch, 'w').events;
  assert.equal(ev!.kind, 'stored');
  const stored = (ev as Extract<typeof ev, { kind: 'stored' }>).blocks;
  assert.deepEqual(stored.map((b) => b.images?.map((i) => i.offset)), [[3], [-13, 8], [-8]]);
  const engineKeys = blockKeys(stored.flatMap((b) => (b.images ? imageBlockTokens(b.tokenIds, b.images) : b.tokenIds)), bs, rootLanes());
  assert.deepEqual(Array.from(engineKeys), Array.from(blockKeys(r.routeTokens, bs, rootLanes())).slice(0, 3));
  // The gRPC stream (smg.grpc.common KvBlock.extra_keys, multimodal keys) decodes the same images.
  const grpc = normaliseBatch(create(KvEventBatchSchema, {
    events: [{ data: { case: 'stored', value: { blocks: blocks.map((b, i) => ({ blockHash: BigInt(20 + i), tokenIds: b.tokens, blockSize: bs, extraKeys: b.keys.map(([identifier, offset]) => ({ key: { case: 'multimodal' as const, value: { identifier: `lora-x:${identifier as string}`, offset: BigInt(offset as number) } } })) })) } } }],
  }), 'w');
  assert.deepEqual((grpc[0] as Extract<(typeof grpc)[0], { kind: 'stored' }>).blocks.map((b) => b.images), stored.map((b) => b.images));
});
