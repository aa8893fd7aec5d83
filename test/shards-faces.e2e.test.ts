// LoRA adapters and custom chat processors on `portico serve --shards 2`, through the real
// `openai` client: an adapter loaded or unloaded through one shard is served (or refused)
// by both, and a processor answers on both. Each request is on a connection of its own (the
// kernel picks the shard per connection); portico_frontend_shard_requests_total shows that
// both shards answered the requests under test, so a face that works on one shard only fails.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { startPortico, QWEN3, ROOT, type Proc } from './helpers/portico.js';

const RULES = `${ROOT}test/fixtures/processors/rules.mjs:provider`;
const K = 24;

let dir: string;
let engine: MockEngine;
const stops: (() => Promise<void>)[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'portico-shards-faces-'));
  const info = Model.load(QWEN3).info();
  engine = await startMockEngine({ port: 0, mode: 'echo', protocol: 'sglang', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: 'qwen' });
});

after(async () => {
  for (const stop of stops.reverse()) await stop();
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(extra: string[]): Promise<Proc> {
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'qwen', '--worker', engine.url, '--shards', '2', ...extra]);
  stops.push(() => s.stop());
  return s;
}

/** A client whose every request opens a connection of its own. */
const freshClient = (s: Proc) => new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { connection: 'close' } });

async function shardCounts(s: Proc): Promise<[number, number]> {
  const text = await (await fetch(`${s.url}/metrics`, { headers: { connection: 'close' } })).text();
  const of = (shard: number) => Number(new RegExp(`^portico_frontend_shard_requests_total\\{shard="${shard}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return [of(0), of(1)];
}

/** Runs `K` requests, one connection each, and asserts both shards answered some of them. */
async function onBothShards<T>(s: Proc, one: (i: number) => Promise<T>): Promise<T[]> {
  const [a0, a1] = await shardCounts(s);
  const out: T[] = [];
  for (let i = 0; i < K; i++) out.push(await one(i));
  const [b0, b1] = await shardCounts(s);
  // The /metrics request of the first count is counted too: more than one on each side.
  assert.ok(b0 - a0 > 1 && b1 - a1 > 1, `both shards answered (shard 0: ${b0 - a0}, shard 1: ${b1 - a1} requests)`);
  return out;
}

const chat = (c: OpenAI, model: string, content: string, id: string) =>
  c.chat.completions.create({ model, messages: [{ role: 'user', content }], max_tokens: 4 }, { headers: { 'x-request-id': id } });

test('an adapter loaded through one shard is served by both; unloaded, both answer 404', async () => {
  const s = await serve([]);
  const c = freshClient(s);
  const adapter = join(dir, 'adapter');
  mkdirSync(adapter);
  const load = await fetch(`${s.url}/v1/load_lora_adapter`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ lora_name: 'ad', lora_path: adapter, base_model_name: 'qwen' }) });
  assert.equal(load.status, 200, await load.text());

  const ids = await onBothShards(s, async (i) => {
    const id = `faces-lora-${i}`;
    const r = await chat(c, 'ad', `Hi ${i}`, id);
    assert.equal(r.model, 'ad');
    const models = await c.models.list();
    assert.ok(models.data.some((m) => m.id === 'ad'), `request ${i}: /v1/models lists the adapter`);
    return id;
  });
  for (const id of ids) assert.equal(engine.context.received.find(id)?.loraId, 'ad', `${id} reached the engine with the adapter's id`);

  const unload = await fetch(`${s.url}/v1/unload_lora_adapter`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ lora_name: 'ad' }) });
  assert.equal(unload.status, 200, await unload.text());
  await onBothShards(s, async (i) => {
    await assert.rejects(chat(c, 'ad', `Hi ${i}`, `faces-gone-${i}`), (e: unknown) => e instanceof OpenAI.NotFoundError && /`ad` does not exist/.test(e.message));
    assert.equal((await chat(c, 'qwen', `Hi ${i}`, `faces-base-${i}`)).model, 'qwen', 'the base model still serves');
  });
});

test('a custom chat processor answers on both shards (unary and streamed); completions stay native', async () => {
  const s = await serve(['--chat-processor', RULES, '--chat-processor-config', '{"answer":42}']);
  const c = freshClient(s);
  await onBothShards(s, async (i) => {
    const card = JSON.parse((await chat(c, 'qwen', 'card', `faces-card-${i}`)).choices[0]!.message.content ?? '');
    assert.deepEqual(card.options, { answer: 42 }, 'the processor built with its options');
    await assert.rejects(chat(c, 'qwen', 'raise:invalid', `faces-raise-${i}`), (e: unknown) => e instanceof OpenAI.BadRequestError && /refused by the processor/.test(e.message), `request ${i}: the processor's InvalidArgument is a 400`);
    let streamed = '';
    for await (const chunk of await c.chat.completions.create({ model: 'qwen', messages: [{ role: 'user', content: 'card' }], stream: true })) streamed += chunk.choices[0]?.delta?.content ?? '';
    assert.deepEqual(JSON.parse(streamed).options, { answer: 42 }, `request ${i}: streamed through the processor`);
    const done = await c.completions.create({ model: 'qwen', prompt: 'native', max_tokens: 2 });
    assert.equal(done.choices.length, 1);
  });
});
