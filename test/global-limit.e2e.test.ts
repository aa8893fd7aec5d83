// --max-concurrent-requests is one limit for the process, whatever the shard count: with
// 2 shards and a limit of 3, three long streams fill it and every further generation, on
// whichever shard its connection lands, gets 503 too_many_requests with Retry-After; once
// the streams end, requests are admitted again. (Before, each shard counted alone: 2 x 3
// were admitted.) Every 503 carries Retry-After, shutting_down included.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { QWEN3, startPortico } from './helpers/portico.js';

const LIMIT = 3;

function chat(url: string, body: object): Promise<Response> {
  // A connection per request, so the kernel spreads them over both shards.
  return fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body }) });
}

test('with --shards 2, --max-concurrent-requests counts the streams of both shards together', async (t) => {
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--shards', '2', '--mock', 'sim', '--mock-workers', '1', '--max-concurrent-requests', String(LIMIT)], { PORTICO_SHARDS: '2' });
  t.after(() => s.stop());

  // Streams that run for seconds (600 tokens at the sim engine's 20 ms a step: margin for a busy machine).
  const streams = await Promise.all(Array.from({ length: LIMIT }, () => chat(s.url, { stream: true, max_tokens: 600, ignore_eos: true })));
  for (const r of streams) assert.equal(r.status, 200);
  const bodies = streams.map((r) => r.text());

  // Twelve more, each on a new connection: with a per-shard count, the shard holding
  // fewer streams would admit some of them.
  const refused = await Promise.all(
    Array.from({ length: 12 }, async () => {
      const r = await chat(s.url, { max_tokens: 1 });
      return { status: r.status, retryAfter: r.headers.get('retry-after'), json: await r.json() };
    }),
  );
  for (const r of refused) {
    assert.equal(r.status, 503, JSON.stringify(r.json));
    assert.equal(r.json.error.code, 'too_many_requests');
    assert.match(r.retryAfter ?? '', /^\d+$/);
  }

  // The streams end; the places are given back in every shard.
  for (const text of await Promise.all(bodies)) assert.ok(text.endsWith('data: [DONE]\n\n'));
  const again = await Promise.all(Array.from({ length: LIMIT }, () => chat(s.url, { max_tokens: 1 })));
  for (const r of again) assert.equal(r.status, 200, await r.text());
});

test('every 503 carries Retry-After: shutting_down and an unhealthy /health too', async (t) => {
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--shards', '1', '--mock', 'sim', '--mock-workers', '1']);
  t.after(() => s.stop());
  const exited = once(s.child, 'exit');
  // A stream keeps the server draining (not yet stopped) while we ask.
  const stream = await chat(s.url, { stream: true, max_tokens: 400, ignore_eos: true });
  assert.equal(stream.status, 200);
  const body = stream.text();
  s.child.kill('SIGTERM');
  let shutting: Response | null = null;
  for (let i = 0; i < 200 && !shutting; i++) {
    const r = await chat(s.url, { max_tokens: 1 });
    if (r.status === 503) shutting = r;
    else await r.text();
  }
  assert.ok(shutting, 'a generation got 503 while draining');
  assert.equal((await shutting.json()).error.code, 'shutting_down');
  assert.match(shutting.headers.get('retry-after') ?? '', /^\d+$/);
  const health = await fetch(`${s.url}/health`, { headers: { connection: 'close' } });
  assert.equal(health.status, 503);
  assert.match(health.headers.get('retry-after') ?? '', /^\d+$/);
  await health.text();
  assert.ok((await body).endsWith('data: [DONE]\n\n'));
  await exited;
});

test('503 no_worker_available carries Retry-After', async (t) => {
  // A worker address nothing listens on (a port the kernel just handed out and took back).
  const { createServer } = await import('node:net');
  const port = await new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', `grpc://127.0.0.1:${port}`]);
  t.after(() => s.stop());
  const r = await chat(s.url, { max_tokens: 1 });
  assert.equal(r.status, 503);
  assert.equal((await r.json()).error.code, 'no_worker_available');
  assert.equal(r.headers.get('retry-after'), '1');
});
