// /v1/embeddings in front of a real vLLM pooling engine (vLLM's CPU build, the tiny Qwen3
// shape converted to an embedding model with --runner pooling --convert embed), through
// the real `openai` client: vectors of the model's hidden size, normalised by the
// engine, base64 equal to floats, token-id inputs, batches.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startPortico, type Proc } from '../helpers/portico.js';
import { eventually } from '../helpers/eventually.js';
import { skipWithoutVllm, startVllm, tinyQwen3Dir, type VllmWorker } from '../helpers/vllm.js';

const skip = skipWithoutVllm();
const MODEL = 'qwen3-embed';
const HIDDEN = 128;
let worker: VllmWorker | undefined;
let fe: Proc | undefined;
let client: OpenAI;

before(async () => {
  if (skip) return;
  const modelDir = tinyQwen3Dir();
  worker = await startVllm({ modelDir, name: MODEL, args: ['--runner', 'pooling', '--convert', 'embed'] });
  fe = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', modelDir, '--model-name', MODEL, '--worker', worker.url]);
  await eventually(async () => ((await fetch(`${fe!.url}/health`).then((r) => r.json())) as { status: string }).status === 'healthy', 'the pooling worker is healthy');
  client = new OpenAI({ baseURL: `${fe.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  await fe?.stop();
  await worker?.kill('SIGKILL');
});

const norm = (v: number[]) => Math.sqrt(v.reduce((a, x) => a + x * x, 0));

test('a batch of strings: one normalised vector of the hidden size each, in order, with usage', { skip }, async () => {
  const r = await client.embeddings.create({ model: MODEL, input: ['hello world', 'a second, longer input text'] });
  assert.deepEqual(r.data.map((d) => d.index), [0, 1]);
  for (const d of r.data) {
    assert.equal(d.embedding.length, HIDDEN);
    assert.ok(Math.abs(norm(d.embedding) - 1) < 1e-3, `norm ${norm(d.embedding)}`);
  }
  assert.notDeepEqual(r.data[0]!.embedding, r.data[1]!.embedding);
  assert.ok(r.usage.prompt_tokens > 0);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens);
});

test('base64 vectors decode to the float ones; token ids embed like their text', { skip }, async () => {
  const f = await client.embeddings.create({ model: MODEL, input: 'hello world', encoding_format: 'float' });
  const b = await fetch(`${fe!.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, input: 'hello world', encoding_format: 'base64' }) }).then((x) => x.json() as Promise<{ data: { embedding: string }[] }>);
  const buf = Buffer.from(b.data[0]!.embedding, 'base64');
  const decoded = [...new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4)];
  assert.equal(decoded.length, HIDDEN);
  for (let i = 0; i < HIDDEN; i++) assert.ok(Math.abs(decoded[i]! - f.data[0]!.embedding[i]!) < 1e-6);
  const tok = await fetch(`${fe!.url}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, prompt: 'hello world', add_special_tokens: false }) }).then((x) => x.json() as Promise<{ tokens: number[] }>);
  const ids = await client.embeddings.create({ model: MODEL, input: tok.tokens });
  for (let i = 0; i < HIDDEN; i++) assert.ok(Math.abs(ids.data[0]!.embedding[i]! - f.data[0]!.embedding[i]!) < 1e-4);
});

test('bad input is a 400 and the engine serves on', { skip }, async () => {
  await assert.rejects(client.embeddings.create({ model: MODEL, input: [] as string[] }), (e: unknown) => e instanceof OpenAI.BadRequestError);
  await assert.rejects(client.embeddings.create({ model: MODEL, input: [151936 * 2] }), (e: unknown) => e instanceof OpenAI.BadRequestError);
  const r = await client.embeddings.create({ model: MODEL, input: 'still here' });
  assert.equal(r.data.length, 1);
});
