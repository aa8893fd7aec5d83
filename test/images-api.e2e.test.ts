// Images through every face, end to end: real clients (OpenAI and Anthropic SDKs) against a
// running `portico serve` for a Qwen2.5-VL model folder (its preprocessor config, the Qwen3
// tokenizer with the vision tokens), mock vLLM engines over real gRPC that check the
// MultimodalInputs they receive, and a local HTTP image host. Counts are checked against the
// native processor's own output; every bad image is a 400 naming the part, and the server
// keeps serving.

import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { imageProcessorFromJson } from '../src/native/vision.js';
import { startPortico, QWEN3, ROOT, type Proc } from './helpers/portico.js';
import { tinyQwen25VlDir } from './helpers/vllm.js';
import { rgbPng } from './helpers/png.js';

const IMAGE_PAD = 151655;
const EOS = 151645;
const dir = tinyQwen25VlDir();
const processor = imageProcessorFromJson(readFileSync(`${ROOT}test/fixtures/vllm-tiny-qwen2.5-vl/preprocessor_config.json`, 'utf8'));
const png = (w: number, h: number, seed: number) => rgbPng(w, h, (x, y) => [(x * seed) & 255, (y * 7 + seed) & 255, (x + y) & 255]);
const tokensOf = (b: Buffer) => processor.processSync(b).numTokens;
const dataUrl = (b: Buffer) => `data:image/png;base64,${b.toString('base64')}`;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const A = png(100, 60, 3);
const B = png(40, 90, 5);
const C = png(64, 64, 9);
// Served by the image host: one hit counter per path.
const hosted = new Map<string, Buffer>([['/a.png', A], ['/c.png', C]]);
const hits = new Map<string, number>();

let engine: MockEngine;
let textEngine: MockEngine;
let sglangEngine: MockEngine;
let llavaEngine: MockEngine;
let prefillEngine: MockEngine;
let decodeEngine: MockEngine;
let pdServer: Proc;
let server: Proc;
let imageHost: http.Server;
let hostUrl: string;
let openai: OpenAI;

interface Received {
  tokenized: { input_ids: number[] };
  mm_inputs?: { mm_placeholders: { offset?: number; length: number }[]; mm_hashes: string[]; im_token_id: number };
}
// (The log lists the newest first.)
const lastReceived = (): Received => engine.context.received.all()[0]!.json() as unknown as Received;

before(async () => {
  imageHost = http.createServer((req, res) => {
    hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
    const b = hosted.get(req.url!);
    if (req.url === '/moved') {
      res.writeHead(302, { location: 'http://localhost:1/private.png' }).end();
      return;
    }
    if (b === undefined) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(b);
  });
  imageHost.listen(0, '127.0.0.1');
  await once(imageHost, 'listening');
  hostUrl = `http://127.0.0.1:${(imageHost.address() as AddressInfo).port}`;
  engine = await startMockEngine({ port: 0, mode: 'sim', protocol: 'vllm', eosTokenIds: [EOS], vocabSize: 151936, servedModelName: 'vl', eosProbability: 0, stepMs: 0 });
  textEngine = await startMockEngine({ port: 0, mode: 'sim', protocol: 'vllm', eosTokenIds: [EOS], vocabSize: 151936, servedModelName: 'text', eosProbability: 0, stepMs: 0 });
  llavaEngine = await startMockEngine({ port: 0, mode: 'sim', protocol: 'sglang', eosTokenIds: [EOS], vocabSize: 151936, servedModelName: 'llava', eosProbability: 0, stepMs: 0 });
  sglangEngine = await startMockEngine({ port: 0, mode: 'sim', protocol: 'sglang', eosTokenIds: [EOS], vocabSize: 151936, servedModelName: 'vl-sglang', eosProbability: 0, stepMs: 0 });
  server = await startPortico([
    'serve', '--http-port', '0', '--host', '127.0.0.1',
    '--model', `vl=${dir}`, '--model', `text=${QWEN3}`, '--model', `vl-sglang=${dir}`, '--model', `llava=${llavaDir()}`, '--worker', engine.url, '--worker', textEngine.url, '--worker', sglangEngine.url, '--worker', llavaEngine.url,
    '--allowed-media-domains', '127.0.0.1', '--allowed-media-addresses', '127.0.0.1',
    '--limit-mm-per-prompt', '{"image": 3}', '--max-image-pixels', '1000000', '--media-fetch-timeout-secs', '5',
  ]);
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'x', maxRetries: 0 });
  // A vLLM prefill/decode pair (NIXL-style hand-off) for the same model.
  const pd = { mode: 'sim' as const, protocol: 'vllm' as const, eosTokenIds: [EOS], vocabSize: 151936, servedModelName: 'vl', eosProbability: 0, stepMs: 0, port: 0 };
  prefillEngine = await startMockEngine({ ...pd, role: 'prefill' });
  decodeEngine = await startMockEngine({ ...pd, role: 'decode' });
  pdServer = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', dir, '--model-name', 'vl', '--prefill-worker', prefillEngine.url, '--decode-worker', decodeEngine.url]);
});
after(async () => {
  await server?.stop();
  await engine?.close();
  await textEngine?.close();
  await sglangEngine?.close();
  await llavaEngine?.close();
  await pdServer?.stop();
  await prefillEngine?.close();
  await decodeEngine?.close();
  imageHost?.close();
});

async function tokenizeCount(messages: unknown[]): Promise<number> {
  const r = await fetch(`${server.url}/tokenize`, { method: 'POST', body: JSON.stringify({ model: 'vl', messages }) });
  assert.equal(r.status, 200);
  return ((await r.json()) as { count: number }).count;
}

/**
 * A LLaVA-1.5-style folder (CLIP tower: shortest-edge resize, 336 × 336 crop, 576 tokens per
 * image) over the Qwen3 tokenizer, its image token one of that vocabulary's.
 */
function llavaDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'portico-llava-'));
  for (const f of readdirSync(QWEN3)) copyFileSync(join(QWEN3, f), join(d, f));
  copyFileSync(`${ROOT}test/fixtures/images/configs/llava-1.5.json`, join(d, 'preprocessor_config.json'));
  writeFileSync(join(d, 'config.json'), JSON.stringify({ architectures: ['LlavaForConditionalGeneration'], model_type: 'llava', image_token_index: IMAGE_PAD, vision_config: { model_type: 'clip_vision_model', patch_size: 14, image_size: 336 }, text_config: { model_type: 'qwen3', vocab_size: 151936, max_position_embeddings: 4096 } }));
  return d;
}

/** The text-only prompt with the placeholder written out: what the image prompt is before expansion. */
const PH = '<|vision_start|><|image_pad|><|vision_end|>';

describe('OpenAI chat', () => {
  test('one inline image: the placeholder expands to the processor\'s token count; the engine gets the tensors, range and hash', async () => {
    const r = await openai.chat.completions.create({
      model: 'vl',
      max_tokens: 3,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: dataUrl(A), detail: 'high' } }] }],
    });
    const base = await tokenizeCount([{ role: 'user', content: `${PH}\nWhat is this?` }]);
    assert.equal(r.usage!.prompt_tokens, base + tokensOf(A) - 1);
    assert.equal(r.usage!.completion_tokens, 3);
    const got = lastReceived();
    assert.equal(got.tokenized.input_ids.length, r.usage!.prompt_tokens);
    const [ph] = got.mm_inputs!.mm_placeholders;
    assert.equal(ph!.length, tokensOf(A));
    assert.ok(got.tokenized.input_ids.slice(ph!.offset ?? 0, (ph!.offset ?? 0) + ph!.length).every((t) => t === IMAGE_PAD));
    assert.deepEqual(got.mm_inputs!.mm_hashes, [sha(A)]);
    assert.equal(got.mm_inputs!.im_token_id, IMAGE_PAD);
    // /tokenize counts the same expanded prompt (with the generation prompt, as chat renders it).
    const t = await fetch(`${server.url}/tokenize`, { method: 'POST', body: JSON.stringify({ model: 'vl', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: dataUrl(A) } }] }] }) });
    assert.equal(((await t.json()) as { count: number }).count, r.usage!.prompt_tokens);
  });

  test('three images over two messages, streamed: ranges in prompt order, one hash each', async () => {
    const stream = await openai.chat.completions.create({
      model: 'vl',
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: dataUrl(A) } }, { type: 'image_url', image_url: { url: dataUrl(B) } }, { type: 'text', text: 'Compare.' }] },
        { role: 'assistant', content: 'They differ.' },
        { role: 'user', content: [{ type: 'text', text: 'And this one?' }, { type: 'image_url', image_url: { url: dataUrl(C) } }] },
      ],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) usage = c.usage;
    }
    assert.ok(text.length > 0);
    const got = lastReceived();
    assert.deepEqual(got.mm_inputs!.mm_placeholders.map((p) => p.length), [tokensOf(A), tokensOf(B), tokensOf(C)]);
    const offsets = got.mm_inputs!.mm_placeholders.map((p) => p.offset ?? 0);
    assert.ok(offsets[0]! < offsets[1]! && offsets[1]! < offsets[2]!);
    assert.deepEqual(got.mm_inputs!.mm_hashes, [sha(A), sha(B), sha(C)]);
    assert.equal(usage!.prompt_tokens, got.tokenized.input_ids.length);
  });

  test('on SGLang\'s protocol too: the engine gets the pixel tensor, image_grid_thw and the ranges', async () => {
    const r = await openai.chat.completions.create({ model: 'vl-sglang', max_tokens: 2, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: dataUrl(A) } }, { type: 'image_url', image_url: { url: dataUrl(C) } }, { type: 'text', text: 'Two.' }] }] });
    const got = sglangEngine.context.received.all()[0]!.json() as { tokenized: { input_ids: number[] }; mm_inputs: { mm_placeholders: { offset?: number; length: number }[]; im_token_id: number; model_specific_tensors: Record<string, { shape: number[] }> } };
    assert.equal(got.tokenized.input_ids.length, r.usage!.prompt_tokens);
    assert.deepEqual(got.mm_inputs.mm_placeholders.map((p) => p.length), [tokensOf(A), tokensOf(C)]);
    assert.equal(got.mm_inputs.im_token_id, IMAGE_PAD);
    assert.deepEqual(got.mm_inputs.model_specific_tensors.image_grid_thw!.shape, [2, 3]);
  });

  test('a LLaVA-style model (CLIP tower): 576 tokens per image, [N, 3, 336, 336] pixels, its own placeholder line for a string template', async () => {
    const r = await openai.chat.completions.create({ model: 'llava', max_tokens: 2, messages: [{ role: 'user', content: [{ type: 'text', text: 'Two pictures.' }, { type: 'image_url', image_url: { url: dataUrl(A) } }, { type: 'image_url', image_url: { url: dataUrl(B) } }] }] });
    const got = llavaEngine.context.received.all()[0]!.json() as { tokenized: { input_ids: number[] }; mm_inputs: { pixel_values: { shape: number[] }; mm_placeholders: { length: number }[] } };
    assert.deepEqual(got.mm_inputs.pixel_values.shape, [2, 3, 336, 336]);
    assert.deepEqual(got.mm_inputs.mm_placeholders.map((p) => p.length), [576, 576]);
    const t = await fetch(`${server.url}/tokenize`, { method: 'POST', body: JSON.stringify({ model: 'llava', messages: [{ role: 'user', content: '<|image_pad|>\n<|image_pad|>\nTwo pictures.' }] }) });
    assert.equal(r.usage!.prompt_tokens, ((await t.json()) as { count: number }).count + 2 * 575);
    assert.equal(got.tokenized.input_ids.length, r.usage!.prompt_tokens);
  });

  test('a remote image is fetched once: the same URL again is served from the cache, and it hashes as the same bytes inline', async () => {
    const ask = (url: string) => openai.chat.completions.create({ model: 'vl', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }, { type: 'text', text: 'hi' }] }] });
    const first = await ask(`${hostUrl}/c.png`);
    assert.deepEqual(lastReceived().mm_inputs!.mm_hashes, [sha(C)]);
    const second = await ask(`${hostUrl}/c.png`);
    assert.equal(hits.get('/c.png'), 1);
    assert.equal(second.usage!.prompt_tokens, first.usage!.prompt_tokens);
    await ask(dataUrl(C));
    assert.deepEqual(lastReceived().mm_inputs!.mm_hashes, [sha(C)]);
    // /metrics counts where each image's tensors came from.
    const m = await (await fetch(`${server.url}/metrics`)).text();
    const count = (source: string) => Number(new RegExp(`^portico_frontend_images_total\\{model="vl",source="${source}"\\} (\\d+)`, 'm').exec(m)?.[1] ?? 0);
    assert.ok(count('processed') >= 3 && count('cached') >= 2, m.split('\n').filter((l) => l.includes('images_total')).join('\n'));
  });
});

describe('disaggregated prefill and decode (vLLM protocol)', () => {
  test('the prefill leg gets the pixels; the decode leg, which receives the prompt\'s KV, only the grids, ranges and hashes', async () => {
    const pd = new OpenAI({ baseURL: `${pdServer.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const r = await pd.chat.completions.create({ model: 'vl', max_tokens: 3, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: dataUrl(A) } }, { type: 'text', text: 'What is it?' }] }] });
    assert.equal(r.usage!.completion_tokens, 3);
    type Mm = { pixel_values?: unknown; model_specific_tensors: Record<string, { shape: number[] }>; mm_placeholders: { length: number }[]; mm_hashes: string[]; batched_keys: string[]; flat_keys?: Record<string, string> };
    const p = prefillEngine.context.received.all()[0]!.json() as { mm_inputs: Mm; kv_transfer_params_json?: string };
    const d = decodeEngine.context.received.all()[0]!.json() as { mm_inputs: Mm; kv_transfer_params_json: string };
    assert.ok(p.mm_inputs.pixel_values, 'the prefill leg runs the vision tower');
    assert.equal(d.mm_inputs.pixel_values, undefined, 'no pixels to the decode leg');
    assert.equal((JSON.parse(d.kv_transfer_params_json) as { do_remote_prefill: boolean }).do_remote_prefill, true);
    for (const m of [p.mm_inputs, d.mm_inputs]) {
      assert.deepEqual(m.model_specific_tensors.image_grid_thw!.shape, [1, 3]);
      assert.deepEqual(m.mm_placeholders.map((x) => x.length), [tokensOf(A)]);
      assert.deepEqual(m.mm_hashes, [sha(A)]);
    }
    assert.deepEqual(d.mm_inputs.batched_keys, ['image_grid_thw', 'patches_per_image']);
    assert.equal(d.mm_inputs.flat_keys?.pixel_values, undefined);
  });
});

describe('Anthropic messages and OpenAI Responses', () => {
  test('Anthropic base64 and url image blocks; count_tokens counts the expanded prompt', async () => {
    const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'x', maxRetries: 0 });
    const messages: Anthropic.MessageParam[] = [{
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: B.toString('base64') } },
        { type: 'image', source: { type: 'url', url: `${hostUrl}/a.png` } },
        { type: 'text', text: 'Describe both.' },
      ],
    }];
    const m = await anthropic.messages.create({ model: 'vl', max_tokens: 2, messages });
    const got = lastReceived();
    assert.deepEqual(got.mm_inputs!.mm_hashes, [sha(B), sha(A)]);
    assert.equal(m.usage.input_tokens, got.tokenized.input_ids.length);
    const counted = await anthropic.messages.countTokens({ model: 'vl', messages });
    assert.equal(counted.input_tokens, m.usage.input_tokens);
  });

  test('Responses input_image parts', async () => {
    const r = await openai.responses.create({
      model: 'vl',
      max_output_tokens: 2,
      store: false,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: dataUrl(A), detail: 'auto' }] }],
    });
    const got = lastReceived();
    assert.deepEqual(got.mm_inputs!.mm_hashes, [sha(A)]);
    assert.equal(r.usage!.input_tokens, got.tokenized.input_ids.length);
    assert.equal(r.usage!.input_tokens, (await tokenizeCount([{ role: 'user', content: `${PH}\nWhat is this?` }])) + tokensOf(A) - 1);
  });
});

describe('bad images: a 400 naming the part, nothing sent, the server still serving', () => {
  const chat = (content: unknown[], model = 'vl') =>
    fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model, max_tokens: 1, messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'ok' }, { role: 'user', content }] }) });
  const cases: [string, () => unknown[], RegExp, string][] = [
    ['bytes that are no image', () => [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.from('not an image at all').toString('base64')}` } }], /image cannot be used/, 'messages[2].content[1]'],
    ['a truncated PNG', () => [{ type: 'image_url', image_url: { url: dataUrl(A.subarray(0, 60)) } }], /image cannot be used/, 'messages[2].content[0]'],
    ['a data: URL that is not base64', () => [{ type: 'image_url', image_url: { url: 'data:image/png,abc' } }], /base64/, 'messages[2].content[0]'],
    ['more pixels than --max-image-pixels (a decompression bomb)', () => [{ type: 'image_url', image_url: { url: dataUrl(rgbPng(1200, 1000, () => [0, 0, 0])) } }], /image cannot be used/, 'messages[2].content[0]'],
    ['more images than --limit-mm-per-prompt', () => [1, 2, 3, 4].map(() => ({ type: 'image_url', image_url: { url: dataUrl(A) } })), /at most 3 images/, 'messages[2].content[3]'],
    ['a domain not allowed', () => [{ type: 'image_url', image_url: { url: 'http://localhost:1/a.png' } }], /not an allowed media domain/, 'messages[2].content[0]'],
    ['a redirect to a domain not allowed', () => [{ type: 'image_url', image_url: { url: `${hostUrl}/moved` } }], /not an allowed media domain/, 'messages[2].content[0]'],
    ['a fetch that fails', () => [{ type: 'image_url', image_url: { url: `${hostUrl}/missing.png` } }], /HTTP 404/, 'messages[2].content[0]'],
    ['a scheme that is not http', () => [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }], /scheme/, 'messages[2].content[0]'],
    ['a bad detail', () => [{ type: 'image_url', image_url: { url: dataUrl(A), detail: 'max' } }], /detail/, 'messages[2].content[0].image_url.detail'],
    ['no url', () => [{ type: 'image_url', image_url: {} }], /url/, 'messages[2].content[0].image_url.url'],
  ];
  for (const [name, content, message, param] of cases) {
    test(name, async () => {
      const before = engine.context.stats.generates;
      const r = await chat(content());
      const body = (await r.json()) as { error: { message: string; param: string } };
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(body.error.message, message);
      assert.equal(body.error.param, param);
      assert.equal(engine.context.stats.generates, before, 'nothing reached the engine');
    });
  }

  test('image placeholder text written in a message with an image is a 400, not a wrong prompt', async () => {
    const r = await chat([{ type: 'text', text: `look: ${PH}` }, { type: 'image_url', image_url: { url: dataUrl(A) } }]);
    assert.equal(r.status, 400);
    assert.match(((await r.json()) as { error: { message: string } }).error.message, /2 image placeholders .* for 1 image/);
  });

  test('a text-only model refuses image parts on every face', async () => {
    const r = await chat([{ type: 'image_url', image_url: { url: dataUrl(A) } }], 'text');
    assert.equal(r.status, 400);
    assert.match(((await r.json()) as { error: { message: string } }).error.message, /messages\[2\]\.content\[0\]/);
    const a = await fetch(`${server.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'text', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: A.toString('base64') } }] }] }) });
    assert.equal(a.status, 400);
    assert.match(((await a.json()) as { error: { message: string } }).error.message, /does not take image input/);
  });

  test('after every refusal the server serves images', async () => {
    const r = await openai.chat.completions.create({ model: 'vl', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: dataUrl(B) } }] }] });
    assert.equal(r.choices.length, 1);
    assert.deepEqual(lastReceived().mm_inputs!.mm_hashes, [sha(B)]);
  });
});
