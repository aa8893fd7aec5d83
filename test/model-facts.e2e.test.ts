// The engine's model facts and the model's own defaults, proven from what the mock
// engines received: one `portico serve` with three models on both engine
// protocols —
//   gen  (SGLang): a folder with generation_config.json: an unset temperature / top_p /
//        top_k / repetition_penalty takes its values (vLLM's rule), not 1 / 1 / -1 / 1;
//   eng  (vLLM):   the same folder, and an engine whose GetModelInfo reports sampling
//        defaults and a context length: the engine's come first, the file fills the rest;
//   plain (SGLang): no generation_config.json: the OpenAI defaults.
// generation_config's max_new_tokens is the output length of a request that sets none
// (vLLM's rule), capped by what the context leaves; a request's own max_tokens is kept.
// pref (SGLang): an engine reporting preferred_sampling_params and a vocabulary of 1000 ids.
// A value the request sets always wins. The seed reaches the engine as a 64-bit value on
// SGLang's protocol (custom_params.seed, exact to the last digit) and as its int32 on
// vLLM's (wider: a 400 naming seed, and the server goes on serving).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';

import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';

let dir: string;
let genEngine: MockEngine;
let engEngine: MockEngine;
let plainEngine: MockEngine;
let prefEngine: MockEngine;
let server: Proc;
let client: OpenAI;

const f32 = Math.fround;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'portico-facts-'));
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(QWEN3, f), join(dir, f));
  writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ temperature: 0.6, top_p: 0.95, top_k: 20, repetition_penalty: 1.05, max_new_tokens: 3, eos_token_id: [151645, 151643] }));
  // config.json says 4096; the engine runs with 8192 (its --max-model-len): the engine's is the limit.
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ max_position_embeddings: 4096 }));
  const info = Model.load(QWEN3).info();
  const start = (protocol: 'sglang' | 'vllm', served: string, maxContextLength?: number) =>
    startMockEngine({ port: 0, mode: 'echo', protocol, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: served, maxContextLength });
  genEngine = await start('sglang', 'gen');
  engEngine = await start('vllm', 'eng', 8192);
  engEngine.context.defaultSamplingParamsJson = JSON.stringify({ temperature: 0.3, top_k: 5 });
  plainEngine = await start('sglang', 'plain');
  // SGLang's --preferred-sampling-params, and a vocabulary the engine reports smaller than the tokenizer's.
  prefEngine = await startMockEngine({ port: 0, mode: 'echo', protocol: 'sglang', eosTokenIds: info.eosTokenIds, vocabSize: 1000, servedModelName: 'pref' });
  prefEngine.context.preferredSamplingParams = JSON.stringify({ min_p: 0.25, top_k: 7 });
  genEngine.context.reportsContextLength = false;
  server = await startPortico([
    'serve', '--http-port', '0', '--host', '127.0.0.1',
    '--model', `gen=${dir}`, '--model', `eng=${dir}`, '--model', `plain=${QWEN3}`, '--model', `pref=${QWEN3}`,
    '--worker', `gen=${genEngine.url}`, '--worker', `eng=${engEngine.url}`, '--worker', `plain=${plainEngine.url}`, '--worker', `pref=${prefEngine.url}`,
  ]);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  await server?.stop();
  for (const e of [genEngine, engEngine, plainEngine, prefEngine]) await e?.close();
  rmSync(dir, { recursive: true, force: true });
});

let seq = 0;

/** Send a chat for `model` with `fields` and return the engine's SamplingParams (proto JSON). */
async function sampling(model: string, engine: MockEngine, fields: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const id = `facts-${model}-${++seq}`;
  await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2, ...fields } as OpenAI.ChatCompletionCreateParamsNonStreaming, { headers: { 'x-request-id': id } });
  const r = engine.context.received.find(id);
  assert.ok(r, `${model}'s engine received ${id}`);
  return r.json().sampling_params as Record<string, any>;
}

test("unset sampling fields take generation_config.json's values (SGLang protocol), not the OpenAI defaults", async () => {
  const s = await sampling('gen', genEngine);
  assert.equal(s.temperature, f32(0.6));
  assert.equal(s.top_p, f32(0.95));
  assert.equal(s.top_k, 20);
  assert.equal(s.repetition_penalty, f32(1.05));
});

test("the engine's GetModelInfo defaults come first, the file fills the rest (vLLM protocol)", async () => {
  const s = await sampling('eng', engEngine);
  assert.equal(s.temperature, f32(0.3), "the engine's temperature");
  assert.equal(s.top_k, 5, "the engine's top_k");
  assert.equal(s.top_p, f32(0.95), "generation_config.json's top_p");
  assert.equal(s.repetition_penalty, f32(1.05));
});

test('a model without generation_config.json keeps the OpenAI defaults', async () => {
  const s = await sampling('plain', plainEngine);
  assert.equal(s.temperature, 1);
  assert.equal(s.top_p, 1);
  assert.equal(s.top_k, -1);
  assert.equal(s.repetition_penalty, 1);
});

test('a value the request sets wins over every default (temperature 0 included)', async () => {
  const s = await sampling('gen', genEngine, { temperature: 0, top_p: 0.5, top_k: 3 });
  assert.equal(s.temperature, undefined, 'temperature 0 is the proto3 default, absent from the JSON');
  assert.equal(s.top_p, 0.5);
  assert.equal(s.top_k, 3);
  const v = await sampling('eng', engEngine, { temperature: 1.5 });
  assert.equal(v.temperature, 1.5);
});

test("SGLang's preferred_sampling_params (GetModelInfo) are the defaults of unset fields; the engine's vocabulary size bounds token ids", async () => {
  const s = await sampling('pref', prefEngine);
  assert.equal(s.min_p, f32(0.25), 'preferred min_p');
  assert.equal(s.top_k, 7, 'preferred top_k');
  assert.equal(s.temperature, 1, 'a field it does not name keeps the OpenAI default');
  assert.equal((await sampling('pref', prefEngine, { top_k: 2 })).top_k, 2, 'the request wins');
  // The engine says its vocabulary is 1000 ids: a prompt id past it is refused before any engine work.
  await assert.rejects(client.completions.create({ model: 'pref', prompt: [5000], max_tokens: 1 }), (e: unknown) => e instanceof OpenAI.BadRequestError && /vocabulary \(size 1000\)/.test(e.message));
  assert.equal((await client.completions.create({ model: 'pref', prompt: [5, 6], max_tokens: 1 })).choices.length, 1, 'ids inside it are served');
});

test("generation_config.json's max_new_tokens is the default output length; a request's max_tokens is its own", async () => {
  const sent = async (model: string, engine: MockEngine, max?: number) => {
    const id = `facts-max-${model}-${++seq}`;
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi there, how are you today?' }], ...(max === undefined ? {} : { max_tokens: max }) }, { headers: { 'x-request-id': id } });
    const got = engine.context.received.find(id)!.json() as { sampling_params?: { max_new_tokens?: number; max_tokens?: number } };
    return { engine: (got.sampling_params?.max_new_tokens ?? got.sampling_params?.max_tokens) as number | undefined, usage: r.usage!.completion_tokens };
  };
  assert.deepEqual(await sent('gen', genEngine), { engine: 3, usage: 3 }, 'SGLang: max_new_tokens 3 from the file');
  assert.deepEqual(await sent('eng', engEngine), { engine: 3, usage: 3 }, 'vLLM: the same file');
  assert.equal((await sent('gen', genEngine, 5)).engine, 5, 'the request sets more: its own');
  assert.notEqual((await sent('plain', plainEngine)).engine, 3, 'no file: no such default');
});

test("the context length is the engine's (GetModelInfo) ahead of config.json's; without an engine answer, config.json's", async () => {
  const models = (await client.models.list()).data as Array<OpenAI.Model & { max_model_len?: number }>;
  const len = (id: string) => models.find((m) => m.id === id)!.max_model_len;
  assert.equal(len('eng'), 8192, 'the engine says 8192, config.json 4096');
  assert.equal(len('gen'), 4096, 'this engine reports no context length: config.json');
  assert.equal(len('plain'), 32768, 'no config.json: the engine');
});

/** A chat body with a seed literal JSON.stringify could not write (past 2^53). */
function seedBody(model: string, seed: string): string {
  return `{"model":${JSON.stringify(model)},"messages":[{"role":"user","content":"Hi"}],"max_tokens":2,"seed":${seed}}`;
}

test("seed reaches SGLang's engine as a 64-bit value, exact to the last digit (custom_params.seed)", async () => {
  for (const seed of ['9223372036854775807', '-9223372036854775808', '9007199254740993', '42']) {
    const id = `facts-seed-${++seq}`;
    const res = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': id }, body: seedBody('gen', seed) });
    assert.equal(res.status, 200, await res.text());
    const s = genEngine.context.received.find(id)!.json().sampling_params as Record<string, any>;
    assert.equal(s.custom_params?.seed, seed);
  }
  const bad = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: seedBody('gen', '9223372036854775808') });
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { error: { param: string } }).error.param, 'seed');
});

test("seed reaches vLLM's engine as its int32 (the proto's width); a wider one is a 400 about seed, and the next request is served", async () => {
  const id = `facts-vseed-${++seq}`;
  const ok = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': id }, body: seedBody('eng', '-2147483648') });
  assert.equal(ok.status, 200);
  assert.equal((engEngine.context.received.find(id)!.json().sampling_params as Record<string, any>).seed, -2147483648);
  const wide = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: seedBody('eng', '9223372036854775807') });
  assert.equal(wide.status, 400);
  const body = (await wide.json()) as { error: { message: string } };
  assert.match(body.error.message, /`seed` must be a 32-bit integer/);
  assert.equal((await sampling('eng', engEngine, { seed: 7 })).seed, 7);
});
