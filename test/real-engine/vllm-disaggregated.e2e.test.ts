// Disaggregated prefill/decode in front of a real vLLM pair: vLLM's CPU build with its
// ExampleConnector (the prompt's KV through shared storage, keyed by the prompt), one worker
// kv_producer (prefill), one kv_consumer (decode). Both are given as plain --worker URLs:
// their engines declare their roles (GetServerInfo kv_role), Portico serves them so.
// The connector is a debug one: it matches prompts of more than one block (128 tokens here)
// and mishandles shorter ones after a store, so every prompt here is long, and the servicer's
// warm-up (short prompts) is off.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startPortico, type Proc } from '../helpers/portico.js';
import { eventually } from '../helpers/eventually.js';
import { skipWithoutVllm, startVllm, tinyQwen3Dir, type VllmWorker } from '../helpers/vllm.js';

const skip = skipWithoutVllm();
const MODEL = 'qwen3-pd';
let prefill: VllmWorker | undefined;
let decode: VllmWorker | undefined;
let fe: Proc | undefined;
let client: OpenAI;

interface Health {
  status: string;
  models: { serving?: string; pools?: Record<string, { workers: number; healthy: number }> }[];
}

/** A prompt well past one 128-token block, different per call. */
const long = (tag: string) => `${tag}: ${Array.from({ length: 70 }, (_, i) => `word${i}`).join(' ')}`;

before(async () => {
  if (skip) return;
  const modelDir = tinyQwen3Dir();
  const store = mkdtempSync(join(tmpdir(), 'portico-pd-kv-'));
  const role = (r: string) => ['--kv-transfer-config', JSON.stringify({ kv_connector: 'ExampleConnector', kv_role: r, kv_connector_extra_config: { shared_storage_path: store } })];
  const env = { SMG_VLLM_SERVICER_WARMUP: 'off' };
  [prefill, decode] = await Promise.all([startVllm({ modelDir, name: MODEL, args: role('kv_producer'), env }), startVllm({ modelDir, name: MODEL, args: role('kv_consumer'), env })]);
  fe = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', modelDir, '--model-name', MODEL, '--worker', prefill.url, '--worker', decode.url, '--health-check-interval-secs', '0.5']);
  await eventually(async () => ((await fetch(`${fe!.url}/health`).then((r) => r.json())) as Health).status === 'healthy', 'the pair is healthy');
  client = new OpenAI({ baseURL: `${fe.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  await fe?.stop();
  await Promise.all([prefill?.kill('SIGKILL'), decode?.kill('SIGKILL')]);
});

test('plain --worker URLs take the roles their engines declare: /health shows both pools', { skip }, async () => {
  const h = (await fetch(`${fe!.url}/health`).then((r) => r.json())) as Health;
  assert.equal(h.models[0]!.serving, 'disaggregated');
  assert.deepEqual(h.models[0]!.pools, { prefill: { workers: 1, healthy: 1 }, decode: { workers: 1, healthy: 1 } });
});

test('a chat completion: prefill on the producer (one token, not streamed), the KV loaded by the consumer, the answer from decode', { skip }, async () => {
  const fromP = prefill!.log().length;
  const fromD = decode!.log().length;
  const r = await fetch(`${fe!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: long('unary') }], max_tokens: 6, temperature: 0, nvext: { extra_fields: ['worker_id'] } }),
  }).then((x) => x.json() as Promise<{ choices: { message: { content: string }; finish_reason: string }[]; usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number } }; nvext: { worker_id: Record<string, number> } }>);
  assert.equal(r.choices[0]!.finish_reason, 'length');
  assert.equal(r.usage.completion_tokens, 6);
  assert.ok(r.choices[0]!.message.content.length > 0);
  assert.deepEqual(Object.keys(r.nvext.worker_id).sort(), ['decode_worker_id', 'prefill_worker_id']);
  // The decode worker found the prompt's KV the prefill worker stored (its whole blocks).
  assert.ok((r.usage.prompt_tokens_details?.cached_tokens ?? 0) >= 128, JSON.stringify(r.usage));
  const id = (await prefill!.waitLog(/Generate request (\S+): input_type=tokenized, stream=False/, fromP))[1]!;
  await decode!.waitLog(new RegExp(`Generate request ${id.replace(/[-]/g, '\\-')}: input_type=tokenized, stream=True`), fromD);
  await decode!.waitLog(/External Cache Hit!/, fromD);
});

test('streamed through the openai client: the same pair, text and usage', { skip }, async () => {
  const fromD = decode!.log().length;
  const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: long('streamed') }], max_tokens: 5, temperature: 0, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const c of stream) {
    text += c.choices[0]?.delta.content ?? '';
    usage = c.usage ?? usage;
  }
  assert.ok(text.length > 0);
  assert.equal(usage?.completion_tokens, 5);
  await decode!.waitLog(/External Cache Hit!/, fromD);
});

test('a pinned prefill worker that is the decode worker is a 400 naming the field', { skip }, async () => {
  const h = await fetch(`${fe!.url}/admin/workers`).then((r) => r.json() as Promise<{ models: { workers: { id: number; role: string }[] }[] }>);
  const decodeId = h.models[0]!.workers.find((w) => w.role === 'decode')!.id;
  const r = await fetch(`${fe!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: long('pinned') }], max_tokens: 2, nvext: { prefill_worker_id: decodeId } }),
  });
  assert.equal(r.status, 400);
  const body = (await r.json()) as { error: { param: string; code: string } };
  assert.equal(body.error.param, 'nvext.prefill_worker_id');
  assert.equal(body.error.code, 'wrong_worker_role');
});

test('the prefill worker gone: the vLLM decode worker serves alone, counted in /metrics', { skip }, async () => {
  await prefill!.kill('SIGKILL');
  await eventually(async () => {
    const h = (await fetch(`${fe!.url}/health`).then((r) => r.json())) as Health;
    return h.models[0]!.pools?.prefill?.healthy === 0;
  }, 'the prefill worker is out');
  const r = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: long('alone') }], max_tokens: 3, temperature: 0 });
  assert.equal(r.usage?.completion_tokens, 3);
  const m = await fetch(`${fe!.url}/metrics`).then((x) => x.text());
  assert.match(m, new RegExp(`disagg_decode_only_total\\{model="${MODEL}"\\} 1\\b`));
});
