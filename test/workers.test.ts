// Workers as separate processes: `portico serve --worker grpc://...` against a
// `portico mock-engine`, readiness while no worker answers, and recovery.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { startPortico, QWEN3 } from './helpers/portico.js';
import { HANG_GUARD_MS } from './helpers/eventually.js';

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function chat(url: string, text: string): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'models', messages: [{ role: 'user', content: text }], nvext: { use_raw_prompt: true } }),
  });
}

test('health is 503 and chat is 503 until a worker answers; then both recover', async (t) => {
  const enginePort = await freePort();
  const server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--worker', `grpc://127.0.0.1:${enginePort}`]);
  t.after(() => server.stop());

  const h = await fetch(`${server.url}/health`);
  assert.equal(h.status, 503);
  const r = await chat(server.url, 'x');
  assert.equal(r.status, 503);
  const err = (await r.json()) as { error: { code: string } };
  assert.equal(err.error.code, 'no_worker_available');

  const engine = await startPortico(['mock-engine', '--port', String(enginePort), '--model-path', QWEN3, '--mode', 'echo']);
  t.after(() => engine.stop());
  const deadline = Date.now() + HANG_GUARD_MS;
  let status = 0;
  while (Date.now() < deadline) {
    status = (await fetch(`${server.url}/health`)).status;
    if (status === 200) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(status, 200, 'health turns 200 once the worker answers');
  const ok = await chat(server.url, 'back online');
  assert.equal(ok.status, 200);
  const body = (await ok.json()) as { model: string; choices: { message: { content: string } }[] };
  assert.equal(body.model, 'models', 'the default model name is the folder name');
  assert.equal(body.choices[0].message.content, 'back online');

  await engine.stop();
  const gone = await chat(server.url, 'worker gone');
  assert.ok(gone.status === 503, `a dead worker gives 503, got ${gone.status}`);
  assert.equal((await fetch(`${server.url}/live`)).status, 200);
});
