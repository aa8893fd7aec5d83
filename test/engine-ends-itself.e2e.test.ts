// When Portico ends a choice on a rule the engine applies too (max_tokens, a stop token id,
// EOS), the engine ends the request by itself one message later: Portico must read that
// message instead of sending an Abort rpc (an rpc and a stream reset per request, the usual
// case for short max_tokens). Stop strings are Portico's alone, so those still abort.
// Observed on the mock engine's own counters (Abort rpcs received, streams finished).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { Model } from '../src/native/core.js';

let engine: MockEngine;
let server: Proc;
let client: OpenAI;

before(async () => {
  const info = Model.load(QWEN3).info();
  engine = await startMockEngine({ port: 0, mode: 'echo', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: 'm' });
  server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', engine.url]);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
});
after(async () => {
  await server?.stop();
  await engine?.close();
});

/** Wait (bounded) until the engine has no stream open, then return its counters. */
async function settled() {
  for (let i = 0; i < 500 && engine.stats.active > 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(engine.stats.active, 0, 'every engine stream ended');
  return { ...engine.stats };
}

// The echo engine streams the templated prompt back: "<|im_start|>", "user", "\n", "Say",
// " hello", ".", "<|im_end|>" (EOS), "\n", "<|im_start|>", "assistant", "\n". Unlike a real
// engine it stops at neither EOS nor stop_token_ids, only at max_tokens or the prompt's end:
// max_tokens 8 makes it end one or two tokens after Portico did.
const messages = [{ role: 'user' as const, content: 'Say hello.' }];

test('requests ended by max_tokens, a stop token id or EOS send no Abort rpc', async () => {
  const before = await settled();

  const one = await client.chat.completions.create({ model: 'm', messages, max_tokens: 1 });
  assert.equal(one.choices[0].finish_reason, 'length');
  assert.equal(one.usage?.completion_tokens, 1);

  const stream = await client.chat.completions.create({ model: 'm', messages, max_tokens: 3, stream: true });
  let text = '';
  let finish: string | null = null;
  for await (const c of stream) {
    text += c.choices[0]?.delta.content ?? '';
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(finish, 'length');
  assert.equal(text, 'user\n');

  const eos = await client.chat.completions.create({ model: 'm', messages, max_tokens: 8 });
  assert.equal(eos.choices[0].finish_reason, 'stop');
  assert.equal(eos.choices[0].message.content, 'user\nSay hello.');

  const dot = (await (await fetch(`${server.url}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', prompt: '.', add_special_tokens: false }) })).json()) as { tokens: number[] };
  assert.equal(dot.tokens.length, 1);
  const stopId = await client.chat.completions.create({ model: 'm', messages, max_tokens: 8, stop_token_ids: dot.tokens } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(stopId.choices[0].finish_reason, 'stop');
  assert.equal(stopId.choices[0].message.content, 'user\nSay hello');

  const after = await settled();
  assert.equal(after.generates - before.generates, 4);
  assert.equal(after.abortRpcs - before.abortRpcs, 0, 'no Abort rpc for requests the engine ends itself');
});

test('a request ended by a stop string is still aborted on the engine', async () => {
  const before = await settled();
  const r = await client.chat.completions.create({ model: 'm', messages, max_tokens: 50, stop: ['hello'] });
  assert.equal(r.choices[0].finish_reason, 'stop');
  assert.equal(r.choices[0].message.content, 'user\nSay ');
  for (let i = 0; i < 500 && engine.stats.abortRpcs === before.abortRpcs; i++) await new Promise((res) => setTimeout(res, 10));
  assert.equal(engine.stats.abortRpcs - before.abortRpcs, 1);
  await settled();
});

test('an engine that goes on past the stop Portico saw is aborted after a few more messages', async () => {
  const before = await settled();
  // EOS at the 7th token; the echo engine would send 4 more tokens and its end.
  const r = await client.chat.completions.create({ model: 'm', messages, max_tokens: 50 });
  assert.equal(r.choices[0].finish_reason, 'stop');
  assert.equal(r.choices[0].message.content, 'user\nSay hello.');
  for (let i = 0; i < 500 && engine.stats.abortRpcs === before.abortRpcs; i++) await new Promise((res) => setTimeout(res, 10));
  assert.equal(engine.stats.abortRpcs - before.abortRpcs, 1);
  await settled();
  // Still serving.
  const ok = await client.chat.completions.create({ model: 'm', messages, max_tokens: 2 });
  assert.equal(ok.choices[0].finish_reason, 'length');
});
