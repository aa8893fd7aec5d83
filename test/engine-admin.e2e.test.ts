// POST /reset_prefix_cache, /start_profile, /stop_profile forwarded to every worker through
// the engine protocol's FlushCache / StartProfile / StopProfile rpcs (both protocols carry
// them; the mock engine implements them and records the profiling state). Checked with
// fetch and the openai SDK against a running server with sim workers of both protocols.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';

const sglang = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'sim', '--mock-workers', '2', '--router-mode', 'kv'], (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

async function post(path: string): Promise<{ status: number; json: { success: boolean; workers: { worker: number; success: boolean; message: string }[] } }> {
  const r = await fetch(`${sglang.server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  return { status: r.status, json: await r.json() };
}

test('reset_prefix_cache flushes every worker; the cache is cold afterwards', async () => {
  const c = sglang.client;
  const body = { model: 'm', messages: [{ role: 'user', content: 'a shared prefix '.repeat(40) }], max_tokens: 2 } as OpenAI.ChatCompletionCreateParamsNonStreaming;
  await c.chat.completions.create(body);
  const warm = await c.chat.completions.create(body);
  assert.ok((warm.usage?.prompt_tokens_details?.cached_tokens ?? 0) > 0, 'second request hits the cache');
  const r = await post('/reset_prefix_cache');
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.deepEqual([r.json.success, r.json.workers.length, r.json.workers.every((w) => w.success)], [true, 2, true]);
  const cold = await c.chat.completions.create(body);
  assert.equal(cold.usage?.prompt_tokens_details?.cached_tokens, 0, 'flushed');
});

test('start_profile / stop_profile reach every worker; a repeated start is a 502 with each answer, then stop works', async () => {
  let r = await post('/start_profile');
  assert.deepEqual([r.status, r.json.success, r.json.workers.length], [200, true, 2]);
  r = await post('/start_profile');
  assert.equal(r.status, 502);
  assert.ok(r.json.workers.every((w) => !w.success && /already profiling/.test(w.message)));
  r = await post('/stop_profile');
  assert.deepEqual([r.status, r.json.success], [200, true]);
  r = await post('/stop_profile');
  assert.equal(r.status, 502);
  // the server goes on serving
  const ok = await sglang.client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
  assert.equal(ok.choices.length, 1);
  const get = await fetch(`${sglang.server.url}/reset_prefix_cache`);
  assert.ok(get.status === 404 || get.status === 405, `GET is not the route (${get.status})`);
});
