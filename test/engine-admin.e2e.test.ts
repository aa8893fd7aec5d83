// POST /reset_prefix_cache, /start_profile, /stop_profile forwarded to every worker through
// the engine protocol's FlushCache / StartProfile / StopProfile rpcs (both protocols carry
// them; the mock engine implements them and records the profiling state). Checked with
// fetch and the openai SDK against a running server with sim workers of both protocols,
// and with an engine that lacks the rpcs (501).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3, startPortico, type Proc } from './helpers/portico.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { Model } from '../src/native/core.js';
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

// The vLLM engine protocol's FlushCache / StartProfile / StopProfile, and an engine build
// without them: mock engines in this process (SGLang protocol with the rpcs left
// unimplemented, vLLM protocol with them), each behind its own `portico serve --worker`.
describe('the vLLM engine protocol, and engines without the rpcs', () => {
  const engines: MockEngine[] = [];
  const servers: Proc[] = [];
  let vllm: Proc;
  let bare: Proc;
  before(async () => {
    const info = Model.load(QWEN3).info();
    const start = async (protocol: 'sglang' | 'vllm', adminRpcs: boolean) => {
      const e = await startMockEngine({ port: 0, mode: 'sim', protocol, adminRpcs, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: 'm' });
      engines.push(e);
      const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', e.url]);
      servers.push(s);
      return s;
    };
    vllm = await start('vllm', true);
    bare = await start('sglang', false);
  });
  after(async () => {
    for (const s of servers) await s.stop();
    for (const e of engines) await e.close();
  });

  const at = async (s: Proc, path: string) => {
    const r = await fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    return { status: r.status, json: (await r.json()) as any };
  };

  test('vLLM protocol: reset_prefix_cache empties the engine cache; start/stop_profile reach the worker', async () => {
    const c = new OpenAI({ baseURL: `${vllm.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const body = { model: 'm', messages: [{ role: 'user', content: 'a shared prefix '.repeat(40) }], max_tokens: 2 } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    await c.chat.completions.create(body);
    const warm = await c.chat.completions.create(body);
    assert.ok((warm.usage?.prompt_tokens_details?.cached_tokens ?? 0) > 0, 'second request hits the cache');
    const r = await at(vllm, '/reset_prefix_cache');
    assert.deepEqual([r.status, r.json.success, r.json.workers.length], [200, true, 1], JSON.stringify(r.json));
    const cold = await c.chat.completions.create(body);
    assert.equal(cold.usage?.prompt_tokens_details?.cached_tokens, 0, 'flushed');
    assert.deepEqual([(await at(vllm, '/start_profile')).status, (await at(vllm, '/start_profile')).status], [200, 502]);
    assert.deepEqual([(await at(vllm, '/stop_profile')).status, (await at(vllm, '/stop_profile')).status], [200, 502]);
  });

  test('an engine without the rpcs: each admin route is a 501 not_implemented naming the rpc, and the server goes on', async () => {
    for (const [path, rpc] of [['/reset_prefix_cache', 'FlushCache'], ['/start_profile', 'StartProfile'], ['/stop_profile', 'StopProfile']]) {
      const r = await at(bare, path!);
      assert.equal(r.status, 501, JSON.stringify(r.json));
      assert.equal(r.json.error.code, 'not_implemented');
      assert.match(r.json.error.message, new RegExp(`the ${rpc} rpc is not available: no worker's engine implements it`));
    }
    const c = new OpenAI({ baseURL: `${bare.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const ok = await c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    assert.equal(ok.choices.length, 1);
  });
});
