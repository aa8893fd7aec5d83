// Operating the server: API keys, the concurrency limit, and graceful shutdown that
// finishes in-flight streams (or aborts them at the deadline).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startPortico, QWEN3 } from './helpers/portico.js';
import { eventually } from './helpers/eventually.js';

const BASE = ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm'];

test('--api-key: API routes need the key (Bearer or x-api-key); health and liveness do not', async (t) => {
  const s = await startPortico([...BASE, '--mock', 'echo', '--mock-workers', '1', '--api-key', 's3cret']);
  t.after(() => s.stop());
  const bad = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(bad.models.list(), (err: unknown) => err instanceof OpenAI.AuthenticationError && err.status === 401);
  const none = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
  assert.equal(none.status, 401);
  assert.equal(((await none.json()) as { error: { code: string } }).error.code, 'invalid_api_key');

  const good = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 's3cret', maxRetries: 0 });
  const r = await good.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 });
  assert.equal(r.object, 'chat.completion');

  const anthropicBad = new Anthropic({ baseURL: s.url, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(anthropicBad.messages.create({ model: 'm', max_tokens: 2, messages: [{ role: 'user', content: 'x' }] }), (err: unknown) => err instanceof Anthropic.AuthenticationError);
  const anthropic = new Anthropic({ baseURL: s.url, apiKey: 's3cret', maxRetries: 0 });
  const m = await anthropic.messages.create({ model: 'm', max_tokens: 2, messages: [{ role: 'user', content: 'x' }] });
  assert.equal(m.type, 'message');

  assert.equal((await fetch(`${s.url}/health`)).status, 200);
  assert.equal((await fetch(`${s.url}/live`)).status, 200);
});

async function startStream(url: string, maxTokens: number): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }], stream: true, max_tokens: maxTokens, ignore_eos: true }),
  });
}

test('--max-concurrent-requests: requests beyond the limit get 503 with Retry-After', async (t) => {
  const s = await startPortico([...BASE, '--mock', 'sim', '--mock-workers', '1', '--max-concurrent-requests', '1']);
  t.after(() => s.stop());
  const first = await startStream(s.url, 50);
  assert.equal(first.status, 200);
  const second = await startStream(s.url, 5);
  assert.equal(second.status, 503);
  assert.equal(second.headers.get('retry-after'), '1');
  assert.equal(((await second.json()) as { error: { code: string } }).error.code, 'too_many_requests');
  await first.text();
  const third = await startStream(s.url, 2);
  assert.equal(third.status, 200, 'the slot is free again once the first stream ended');
  await third.text();
});

test('SIGTERM drains: health says shutting_down, new work is refused, the in-flight stream finishes', async () => {
  const s = await startPortico([...BASE, '--mock', 'sim', '--mock-workers', '1']);
  const stream = await startStream(s.url, 40);
  assert.equal(stream.status, 200);
  const body = stream.text();
  s.child.kill('SIGTERM');
  await eventually(async () => (await fetch(`${s.url}/health`)).status !== 200, 'health changes once SIGTERM is handled');
  const h = await fetch(`${s.url}/health`);
  assert.equal(h.status, 503);
  assert.deepEqual(await h.json(), { status: 'shutting_down' });
  const refused = await startStream(s.url, 2);
  assert.equal(refused.status, 503);
  const text = await body;
  assert.ok(text.endsWith('data: [DONE]\n\n'), 'the in-flight stream completed');
  assert.match(text, /"finish_reason":"length"/);
  const [code] = (await once(s.child, 'exit')) as [number];
  assert.equal(code, 0);
});

test('at the shutdown deadline the remaining streams are cut and the process exits', async () => {
  const s = await startPortico([...BASE, '--mock', 'sim', '--mock-workers', '1', '--shutdown-timeout-secs', '0.3']);
  const stream = await startStream(s.url, 30_000);
  assert.equal(stream.status, 200);
  const body = stream.text().then(
    (t) => t,
    () => 'connection closed',
  );
  const t0 = Date.now();
  s.child.kill('SIGTERM');
  const [code] = (await once(s.child, 'exit')) as [number];
  assert.equal(code, 0);
  assert.ok(Date.now() - t0 < 5000, 'exited soon after the deadline');
  const text = await body;
  assert.ok(!text.endsWith('data: [DONE]\n\n'), 'the stream was cut, not completed');
});

test('--log-format json --log-requests writes one JSON line per request, with its id', async (t) => {
  const s = await startPortico([...BASE, '--mock', 'echo', '--mock-workers', '1', '--log-format', 'json', '--log-requests']);
  t.after(() => s.stop());
  await fetch(`${s.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'req-log-1' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 }),
  });
  await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'x-request-id': 'req-log-2' }, body: '{' });
  await eventually(() => s.output().includes('req-log-2'), 'both requests are logged');
  const lines = s
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const ok = lines.find((l) => l.request_id === 'req-log-1');
  assert.ok(ok, 'the request is logged');
  assert.equal(ok.level, 'info');
  assert.equal(ok.status, 200);
  assert.equal(ok.model, 'm');
  assert.equal(typeof ok.ms, 'number');
  const bad = lines.find((l) => l.request_id === 'req-log-2');
  assert.equal(bad?.status, 400);
  assert.ok(lines.every((l) => typeof l.ts === 'string' && typeof l.msg === 'string'));
});

test('--cors-allow-origins answers preflights and marks responses for allowed origins only', async (t) => {
  const s = await startPortico([...BASE, '--mock', 'echo', '--mock-workers', '1', '--cors-allow-origins', 'https://app.example']);
  t.after(() => s.stop());
  const pre = await fetch(`${s.url}/v1/chat/completions`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' } });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), 'https://app.example');
  assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 });
  const ok = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { origin: 'https://app.example' }, body });
  assert.equal(ok.headers.get('access-control-allow-origin'), 'https://app.example');
  const other = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { origin: 'https://evil.example' }, body });
  assert.equal(other.status, 200);
  assert.equal(other.headers.get('access-control-allow-origin'), null);
});

test('--request-timeout-secs: a request past its deadline gets 504 (or a final error event) and its engine work stops', async (t) => {
  const s = await startPortico([...BASE, '--mock', 'sim', '--mock-workers', '1', '--request-timeout-secs', '0.5']);
  t.after(() => s.stop());
  const long = { model: 'm', messages: [{ role: 'user', content: 'go' }], max_tokens: 30_000, ignore_eos: true };
  const t0 = Date.now();
  const unary = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(long) });
  assert.equal(unary.status, 504);
  assert.equal(((await unary.json()) as { error: { code: string } }).error.code, 'request_timeout');
  assert.ok(Date.now() - t0 < 5000);

  const stream = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...long, stream: true }) });
  assert.equal(stream.status, 200);
  const text = await stream.text();
  assert.match(text, /event: error\ndata: \{"error":\{"message":"the request did not finish within the server's limit of 0.5 s"/);
  assert.ok(text.endsWith('data: [DONE]\n\n'));

  // The aborts travel to the engine asynchronously: wait (bounded) for the counts to drop.
  let metrics = '';
  for (let i = 0; i < 100; i++) {
    metrics = await (await fetch(`${s.url}/metrics`)).text();
    if (/^portico_frontend_worker_active_requests\{model="m",worker="0"\} 0$/m.test(metrics)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.match(metrics, /^portico_frontend_inflight_requests\{model="m"\} 0$/m);
  assert.match(metrics, /^portico_frontend_worker_active_requests\{model="m",worker="0"\} 0$/m);
  const quick = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...long, max_tokens: 2 }) });
  assert.equal(quick.status, 200, 'short requests still finish');
});
