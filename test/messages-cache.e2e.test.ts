// Anthropic usage on a prompt the engine finds in its prefix cache, with the real
// @anthropic-ai/sdk against the simulated engine (which reports the prefix it reused):
// input_tokens counts only the tokens not read from cache, cache_read_input_tokens the
// rest, on /v1/messages and its stream alike; OpenAI's prompt_tokens stays the whole prompt.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { Model } from '../src/native/core.js';

const MODEL = 'qwen3';
let server: Proc;
let engine: MockEngine;
let anthropic: Anthropic;
let openai: OpenAI;

before(async () => {
  // The Anthropic API has no ignore_eos: a simulated engine that never draws EOS makes every
  // answer exactly max_tokens long (by default it ends with EOS 2% of steps, which made the
  // output counts below fail now and then).
  const info = Model.load(QWEN3).info();
  engine = await startMockEngine({ port: 0, mode: 'sim', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: MODEL, eosProbability: 0 });
  server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--worker', engine.url]);
  anthropic = new Anthropic({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  await server?.stop();
  await engine?.close();
});

// Long enough to fill several KV blocks, distinct per test so that caches do not mix.
const system = (tag: string): string => `${tag}: ${'You are a careful assistant who answers briefly. '.repeat(12)}`;

test('a repeated prompt: input_tokens excludes the tokens read from cache', async () => {
  const body = { model: MODEL, max_tokens: 2, system: system('unary'), messages: [{ role: 'user' as const, content: 'Hello' }] };
  const cold = await anthropic.messages.create(body);
  assert.equal(cold.usage.cache_read_input_tokens ?? 0, 0, 'nothing cached on the first request');
  const whole = cold.usage.input_tokens;
  assert.ok(whole > 64, `prompt ${whole} tokens`);
  const warm = await anthropic.messages.create(body);
  const read = warm.usage.cache_read_input_tokens ?? 0;
  assert.ok(read > 0 && read <= whole, `cache_read_input_tokens ${read} of ${whole}`);
  assert.equal(warm.usage.input_tokens + read, whole, 'input_tokens + cache_read_input_tokens is the prompt');
  assert.ok(warm.usage.input_tokens < whole);
  assert.equal(warm.usage.output_tokens, 2);
  // The same request on chat completions reports the whole prompt, the cached part inside it.
  const chat = await openai.chat.completions.create({ model: MODEL, max_tokens: 2, messages: [{ role: 'system', content: body.system }, { role: 'user', content: 'Hello' }] });
  assert.equal(chat.usage?.prompt_tokens, whole);
  assert.ok((chat.usage?.prompt_tokens_details?.cached_tokens ?? 0) > 0);
});

test('streaming: message_start and message_delta carry the split, and the SDK assembles it', async () => {
  const body = { model: MODEL, max_tokens: 3, system: system('stream'), messages: [{ role: 'user' as const, content: 'Hello' }] };
  const cold = await anthropic.messages.create(body);
  const whole = cold.usage.input_tokens;
  const stream = anthropic.messages.stream(body);
  let start: Anthropic.Usage | undefined;
  let delta: Anthropic.MessageDeltaUsage | undefined;
  stream.on('streamEvent', (e) => {
    if (e.type === 'message_start') start = { ...e.message.usage }; // (the SDK updates its own copy later)
    if (e.type === 'message_delta') delta = { ...e.usage };
  });
  const m = await stream.finalMessage();
  assert.ok(start && delta);
  const read = start.cache_read_input_tokens ?? 0;
  assert.ok(read > 0, `message_start cache_read_input_tokens ${read}`);
  assert.equal(start.input_tokens + read, whole);
  assert.equal(start.output_tokens, 0);
  assert.equal(delta.input_tokens, start.input_tokens);
  assert.equal(delta.cache_read_input_tokens, read);
  assert.equal(delta.output_tokens, 3);
  assert.equal(m.stop_reason, 'max_tokens');
  assert.deepEqual({ input: m.usage.input_tokens, read: m.usage.cache_read_input_tokens, output: m.usage.output_tokens }, { input: whole - read, read, output: 3 });
});

test('a prompt with nothing cached omits cache_read_input_tokens', async () => {
  const res = await fetch(`${server.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: `fresh ${Date.now()} ${'words '.repeat(40)}` }] }),
  });
  assert.equal(res.status, 200);
  const usage = (await res.json()).usage;
  assert.deepEqual(Object.keys(usage).sort(), ['input_tokens', 'output_tokens']);
  assert.ok(usage.input_tokens > 40);
});
