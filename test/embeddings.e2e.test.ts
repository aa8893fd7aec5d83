// POST /v1/embeddings through the real server and the openai SDK, with echo mock
// engines (deterministic, L2-normalised vectors of 256 values from the input ids):
// every input form, batches, float and base64 (the SDK's default), dimensions,
// usage, routing overrides, bad inputs and the requests_total metric.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startPortico, QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { Model } from '../src/native/core.js';
import { mockEmbedding } from '../src/mock/embed.js';

const MODEL = 'qwen3';
const DIM = 256;
const tok = Model.load(QWEN3);

const served = useServer(['serve', '--shards', '1', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '2'], (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

const norm = (v: number[]) => Math.sqrt(v.reduce((a, x) => a + x * x, 0));
/** What the mock engine answers for these ids, as float32 values. */
const expected = (ids: ArrayLike<number>) => Array.from(mockEmbedding(ids, DIM));

function assertClose(actual: number[], want: number[]) {
  assert.equal(actual.length, want.length);
  for (let i = 0; i < want.length; i++) assert.ok(Math.abs(actual[i]! - want[i]!) < 1e-6, `value ${i}: ${actual[i]} vs ${want[i]}`);
}

async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${served.server.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as any };
}

test('the openai SDK default (base64) decodes to the engine\'s float32 vector, with usage', async () => {
  const r = await served.client.embeddings.create({ model: MODEL, input: 'The quick brown fox' });
  assert.equal(r.object, 'list');
  assert.equal(r.model, MODEL);
  assert.equal(r.data.length, 1);
  assert.equal(r.data[0]!.object, 'embedding');
  assert.equal(r.data[0]!.index, 0);
  const ids = tok.encode('The quick brown fox', true);
  assertClose(r.data[0]!.embedding, expected(ids));
  assert.ok(Math.abs(norm(r.data[0]!.embedding) - 1) < 1e-5);
  assert.deepEqual(r.usage, { prompt_tokens: ids.length, total_tokens: ids.length });
});

test('base64 is little-endian float32 bytes, byte for byte', async () => {
  const { status, json } = await post({ model: MODEL, input: [5, 6, 7], encoding_format: 'base64' });
  assert.equal(status, 200);
  const buf = Buffer.from(json.data[0].embedding, 'base64');
  assert.equal(buf.length, DIM * 4);
  const want = mockEmbedding([5, 6, 7], DIM);
  for (let i = 0; i < DIM; i++) assert.equal(buf.readFloatLE(i * 4), want[i]);
});

test('encoding_format float: JSON numbers, the same values as base64', async () => {
  const f = await served.client.embeddings.create({ model: MODEL, input: 'same text', encoding_format: 'float' });
  const b = await served.client.embeddings.create({ model: MODEL, input: 'same text' });
  assert.ok(Array.isArray(f.data[0]!.embedding));
  assert.equal(typeof f.data[0]!.embedding[0], 'number');
  assertClose(f.data[0]!.embedding, b.data[0]!.embedding);
});

test('a batch of strings: one vector per input, in input order, usage summed', async () => {
  const texts = ['alpha', 'beta gamma', 'delta epsilon zeta', 'alpha'];
  const r = await served.client.embeddings.create({ model: MODEL, input: texts, encoding_format: 'float' });
  assert.deepEqual(r.data.map((d) => d.index), [0, 1, 2, 3]);
  const ids = texts.map((t) => tok.encode(t, true));
  r.data.forEach((d, i) => assertClose(d.embedding, expected(ids[i]!)));
  assertClose(r.data[0]!.embedding, r.data[3]!.embedding);
  assert.notDeepEqual(r.data[0]!.embedding, r.data[1]!.embedding);
  const total = ids.reduce((a, x) => a + x.length, 0);
  assert.deepEqual(r.usage, { prompt_tokens: total, total_tokens: total });
});

test('token ids and arrays of token ids are embedded as given', async () => {
  const one = await served.client.embeddings.create({ model: MODEL, input: [1, 2, 3], encoding_format: 'float' });
  assertClose(one.data[0]!.embedding, expected([1, 2, 3]));
  assert.equal(one.usage.prompt_tokens, 3);
  const many = await served.client.embeddings.create({ model: MODEL, input: [[1, 2, 3], [4], [9, 9]] });
  assert.equal(many.data.length, 3);
  assertClose(many.data[0]!.embedding, expected([1, 2, 3]));
  assertClose(many.data[1]!.embedding, expected([4]));
  assertClose(many.data[2]!.embedding, expected([9, 9]));
  assert.equal(many.usage.prompt_tokens, 6);
});

test('dimensions: the leading values, renormalised to unit length (Matryoshka truncation)', async () => {
  const r = await served.client.embeddings.create({ model: MODEL, input: [1, 2, 3], dimensions: 8, encoding_format: 'float' });
  const v = r.data[0]!.embedding;
  assert.equal(v.length, 8);
  assert.ok(Math.abs(norm(v) - 1) < 1e-5);
  const full = expected([1, 2, 3]).slice(0, 8);
  const k = norm(full);
  assertClose(v, full.map((x) => x / k));
  const same = await served.client.embeddings.create({ model: MODEL, input: [1, 2, 3], dimensions: DIM, encoding_format: 'float' });
  assertClose(same.data[0]!.embedding, expected([1, 2, 3]));
});

test('user is accepted; nvext routing overrides reach the router', async () => {
  const r = await served.client.embeddings.create({ model: MODEL, input: 'x', user: 'u-1' });
  assert.equal(r.data.length, 1);
  const pinned = await post({ model: MODEL, input: 'x', nvext: { backend_instance_id: 1 } });
  assert.equal(pinned.status, 200);
  const unknown = await post({ model: MODEL, input: 'x', nvext: { backend_instance_id: 7 } });
  assert.equal(unknown.status, 400);
  assert.match(unknown.json.error.message, /worker 7 does not exist/);
  const header = await post({ model: MODEL, input: 'x' }, { 'x-dynamo-worker-instance-id': '9' });
  assert.equal(header.status, 400);
  assert.match(header.json.error.message, /worker 9 does not exist/);
});

test('an input longer than the engine\'s context is a 400 that says both lengths (checked by Portico with the context GetModelInfo gave)', async () => {
  const ids = Array.from({ length: 32769 }, (_, i) => i % 1000);
  const { status, json } = await post({ model: MODEL, input: ids });
  assert.equal(status, 400);
  assert.equal(json.error.type, 'invalid_request_error');
  assert.equal(json.error.code, 'context_length_exceeded');
  assert.match(json.error.message, /maximum context length is 32768 tokens\. However, `input` has 32769 tokens/);
});

const BAD: Array<[string, unknown, number, RegExp, string?]> = [
  ['input missing', { model: MODEL }, 400, /`input` is required/],
  ['input null', { model: MODEL, input: null }, 400, /`input` is required/],
  ['input an empty string', { model: MODEL, input: '' }, 400, /`input` must not be an empty string/],
  ['input an empty array', { model: MODEL, input: [] }, 400, /`input` must not be empty/],
  ['an empty string in a batch', { model: MODEL, input: ['a', ''] }, 400, /`input\[1\]` must not be an empty string/],
  ['an empty token list in a batch', { model: MODEL, input: [[1], []] }, 400, /`input\[1\]` must not be empty/],
  ['input a number', { model: MODEL, input: 5 }, 400, /`input` must be a string, an array of strings/],
  ['input an object', { model: MODEL, input: { text: 'a' } }, 400, /`input` must be a string, an array of strings/],
  ['a batch item an object', { model: MODEL, input: ['a', { t: 1 }] }, 400, /`input\[1\]` must be a string or an array of token ids, got object/],
  ['strings and numbers mixed', { model: MODEL, input: ['a', 1] }, 400, /`input\[1\]` must be a string or an array of token ids, got number/],
  ['a negative token id', { model: MODEL, input: [1, -2] }, 400, /item 1 is -2/],
  ['a fractional token id', { model: MODEL, input: [[1.5]] }, 400, /`input\[0\]` must hold non-negative integer token ids; item 0 is 1.5/],
  ['a token id outside the vocabulary', { model: MODEL, input: [999999999] }, 400, /token id 999999999, outside the vocabulary/],
  ['nested three deep', { model: MODEL, input: [[[1]]] }, 400, /item 0 is \[1\]/],
  ['too many inputs', { model: MODEL, input: Array.from({ length: 2049 }, () => 'a') }, 400, /2049 inputs; at most 2048/],
  ['encoding_format unknown', { model: MODEL, input: 'a', encoding_format: 'int8' }, 400, /`encoding_format` must be "float" or "base64", got "int8"/],
  ['encoding_format a number', { model: MODEL, input: 'a', encoding_format: 1 }, 400, /`encoding_format` must be a string/],
  ['dimensions zero', { model: MODEL, input: 'a', dimensions: 0 }, 400, /`dimensions` must be at least 1, got 0/],
  ['dimensions negative', { model: MODEL, input: 'a', dimensions: -3 }, 400, /`dimensions` must be at least 1/],
  ['dimensions a fraction', { model: MODEL, input: 'a', dimensions: 1.5 }, 400, /`dimensions` must be an integer/],
  ['dimensions a string', { model: MODEL, input: 'a', dimensions: '8' }, 400, /`dimensions` must be an integer/],
  ['dimensions above the model\'s size', { model: MODEL, input: 'a', dimensions: DIM + 1 }, 400, /`dimensions` must be at most 256/],
  ['user a number', { model: MODEL, input: 'a', user: 5 }, 400, /`user` must be a string/],
  ['model missing', { input: 'a' }, 400, /`model` is required/],
  ['model blank', { model: ' ', input: 'a' }, 400, /`model` must not be blank/],
  ['an unknown model', { model: 'nope', input: 'a' }, 404, /`nope` does not exist/],
  ['an unknown field', { model: MODEL, input: 'a', bogus: 1 }, 400, /Unsupported parameter\(s\): `bogus`/],
  ['nvext.extra_fields', { model: MODEL, input: 'a', nvext: { extra_fields: ['worker_id'] } }, 400, /`nvext\.extra_fields` is not supported on \/v1\/embeddings/],
  ['nvext.agent_hints.speculative_prefill', { model: MODEL, input: 'a', nvext: { agent_hints: { speculative_prefill: true } } }, 400, /`nvext\.agent_hints\.speculative_prefill` is not supported on \/v1\/embeddings/],
  ['nvext with an unknown key', { model: MODEL, input: 'a', nvext: { bogus: 1 } }, 400, /`nvext\.bogus`/],
  ['a body that is not JSON', 'not json', 400, /invalid JSON/],
  ['a JSON array body', '[]', 400, /must be a JSON object/],
];

for (const [name, body, status, message, type] of BAD) {
  test(`bad input: ${name} → ${status}`, async () => {
    const r = await post(body);
    assert.equal(r.status, status, JSON.stringify(r.json));
    assert.equal(r.json.error.type, type ?? 'invalid_request_error');
    assert.match(r.json.error.message, message);
    const ok = await post({ model: MODEL, input: 'still serving' });
    assert.equal(ok.status, 200, 'the server still serves');
  });
}

test('the openai SDK surfaces a bad request as BadRequestError', async () => {
  await assert.rejects(served.client.embeddings.create({ model: MODEL, input: '' }), (err: unknown) => err instanceof OpenAI.BadRequestError && /empty string/.test(err.message));
});

test('requests_total counts embeddings under endpoint="/v1/embeddings"', async () => {
  const text = await fetch(`${served.server.url}/metrics`).then((r) => r.text());
  const ok = /requests_total\{model="qwen3",endpoint="\/v1\/embeddings",request_type="unary",status="success",error_type=""\} (\d+)/.exec(text);
  const bad = /requests_total\{model="qwen3",endpoint="\/v1\/embeddings",request_type="unary",status="error",error_type="validation"\} (\d+)/.exec(text);
  assert.ok(ok && Number(ok[1]) > 0, text);
  assert.ok(bad && Number(bad[1]) > 0, text);
});

test('both engine protocols carry Embed: the same ids give the same vector over SGLang and vLLM', async () => {
  const { startMockEngine } = await import('../src/mock/engine-server.js');
  const { createEngineClient } = await import('../src/engine/factory.js');
  const { EngineError } = await import('../src/engine/errors.js');
  const engines = await Promise.all((['sglang', 'vllm'] as const).map((protocol) => startMockEngine({ port: 0, mode: 'echo', protocol, eosTokenIds: [0], vocabSize: 1000, embeddingDim: 16 })));
  try {
    const results = [];
    for (const e of engines) {
      const c = createEngineClient(e.url);
      try {
        results.push(await c.embed({ requestId: 'e1', inputIds: Uint32Array.from([3, 1, 4]) }, AbortSignal.timeout(5000)));
        await assert.rejects(c.embed({ requestId: 'e2', inputIds: Uint32Array.from([5000]) }, AbortSignal.timeout(5000)), (err: unknown) => err instanceof EngineError && err.code === 'invalid_argument' && /outside the vocabulary/.test(err.message));
      } finally {
        c.close();
      }
    }
    for (const r of results) {
      assert.equal(r.embedding.length, 16);
      assert.equal(r.promptTokens, 3);
      assert.deepEqual(Array.from(r.embedding), Array.from(mockEmbedding([3, 1, 4], 16)));
    }
  } finally {
    await Promise.all(engines.map((e) => e.close()));
  }
});

test('portico mock-engine --embedding-dim sets the vector length and reports it in server info', async () => {
  const { createEngineClient } = await import('../src/engine/factory.js');
  const p = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--embedding-dim', '12']);
  const c = createEngineClient(`grpc://127.0.0.1:${p.port}`);
  try {
    assert.equal((await c.serverInfo()).serverArgs['embedding_dim'], 12);
    const r = await c.embed({ requestId: 'd1', inputIds: Uint32Array.from([7, 8]) }, AbortSignal.timeout(5000));
    assert.deepEqual(Array.from(r.embedding), Array.from(mockEmbedding([7, 8], 12)));
  } finally {
    c.close();
    await p.stop();
  }
});


test('a worker without the Embed rpc: /v1/embeddings is a 501 embeddings_unsupported, on both protocols, and generation still works', async () => {
  for (const scheme of ['grpc', 'vllm+grpc']) {
    const engine = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--embedding-dim', '0', ...(scheme === 'vllm+grpc' ? ['--protocol', 'vllm'] : [])]);
    const worker = `${scheme}://127.0.0.1:${engine.port}`;
    const front = await startPortico(['serve', '--shards', '1', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--worker', worker]);
    try {
      const openai = new OpenAI({ baseURL: `${front.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${front.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, input: 'hello' }) });
        assert.equal(res.status, 501);
        const body = (await res.json()) as any;
        assert.equal(body.error.code, 'embeddings_unsupported');
        assert.equal(body.error.type, 'internal_error');
        assert.match(body.error.message, /does not serve embeddings/);
        assert.ok(!JSON.stringify(body).includes(String(engine.port)), 'the worker address stays out of the client message');
      }
      await assert.rejects(openai.embeddings.create({ model: MODEL, input: 'hello' }), (err: unknown) => err instanceof OpenAI.APIError && err.status === 501);
      const chat = await openai.chat.completions.create({ model: MODEL, max_tokens: 3, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(chat.choices.length, 1);
      assert.ok(chat.usage!.completion_tokens > 0);
    } finally {
      await front.stop();
      await engine.stop();
    }
  }
});
