// Worker administration at run time, with real mock-engine processes: add a worker,
// route to it, remove it, and every bad call.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startPortico, QWEN3 } from './helpers/portico.js';

async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as any };
}

test('workers can be listed, added and removed while serving', async (t) => {
  const engine = await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'echo']);
  t.after(() => engine.stop());
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1', '--api-key', 'k']);
  t.after(() => s.stop());
  const auth = { authorization: 'Bearer k' };

  assert.equal((await call(s.url, 'GET', '/admin/workers')).status, 401, 'admin needs the API key');
  const before = await call(s.url, 'GET', '/admin/workers', undefined, auth);
  assert.equal(before.status, 200);
  assert.deepEqual(before.json.models[0].workers.map((w: { id: number }) => w.id), [0]);

  const added = await call(s.url, 'POST', '/admin/workers', { url: engine.url }, auth);
  assert.equal(added.status, 201);
  assert.equal(added.json.worker.id, 1);
  assert.equal(added.json.worker.healthy, true);

  const routed = await call(s.url, 'POST', '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'to the new worker' }], nvext: { use_raw_prompt: true, backend_instance_id: 1, extra_fields: ['worker_id'] } }, auth);
  assert.equal(routed.status, 200);
  assert.equal(routed.json.choices[0].message.content, 'to the new worker');
  assert.equal(routed.json.nvext.worker_id.decode_worker_id, 1);

  assert.equal((await call(s.url, 'POST', '/admin/workers', { url: engine.url }, auth)).status, 409, 'the same worker twice');

  const removed = await call(s.url, 'DELETE', '/admin/workers/0', undefined, auth);
  assert.equal(removed.status, 200);
  assert.deepEqual(removed.json, { model: 'm', removed: 0 });
  const after = await call(s.url, 'GET', '/admin/workers', undefined, auth);
  assert.deepEqual(after.json.models[0].workers.map((w: { id: number }) => w.id), [1]);
  const gone = await call(s.url, 'POST', '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }], nvext: { backend_instance_id: 0 } }, auth);
  assert.equal(gone.status, 400);
  assert.match(gone.json.error.message, /worker 0 does not exist/);
  const still = await call(s.url, 'POST', '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'served by 1' }], nvext: { use_raw_prompt: true } }, auth);
  assert.equal(still.json.choices[0].message.content, 'served by 1');
});

test('bad admin calls get clear errors', async (t) => {
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1']);
  t.after(() => s.stop());
  const cases: [string, string, unknown, number, RegExp][] = [
    ['POST', '/admin/workers', '{', 400, /invalid JSON/],
    ['POST', '/admin/workers', {}, 400, /`url` is required/],
    ['POST', '/admin/workers', { url: 'ftp://x:1' }, 400, /ftp/],
    ['POST', '/admin/workers', { url: 'grpc://127.0.0.1:1', model: 'nope' }, 404, /does not exist/],
    ['DELETE', '/admin/workers/abc', undefined, 400, /non-negative integer/],
    ['DELETE', '/admin/workers/42', undefined, 404, /worker 42 does not exist/],
  ];
  for (const [method, path, body, status, message] of cases) {
    const r = await call(s.url, method, path, body);
    assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}`);
    assert.match(r.json.error.message, message);
  }
});
