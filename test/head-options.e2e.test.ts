// HEAD and OPTIONS against a real server: every GET route answers HEAD with the GET's
// status and headers and no body; OPTIONS gets 204 with Allow; no HEAD, 204 or 304
// answer carries a body (checked on the wire: the next response on the same connection
// must parse right after the headers).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QWEN3, startPortico, type Proc } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { rawExchange } from './helpers/raw-http.js';

const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1']);

/** Every GET route of src/api/routes.ts. */
const GET_ROUTES = ['/v1/models', '/admin/workers', '/busy_threshold', '/health', '/live', '/metrics'];
/** Headers whose values legitimately differ between two answers. */
const VARYING = new Set(['date', 'x-request-id', 'content-length']);

const LIVE = 'GET /live HTTP/1.1\r\nHost: x\r\n\r\n';

for (const path of GET_ROUTES) {
  test(`HEAD ${path}: the GET's status and headers, no body, and the connection stays in step`, async () => {
    const port = served.server.port;
    const get = await rawExchange(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    // HEAD, then a GET on the same connection: a HEAD answer with body bytes would corrupt the second response.
    const r = await rawExchange(port, `HEAD ${path} HTTP/1.1\r\nHost: x\r\n\r\n${LIVE}`, { want: 2, heads: 1 });
    const [head, after] = r.responses;
    assert.equal(head!.status, get.responses[0]!.status);
    assert.equal(head!.body, '');
    for (const [k, v] of Object.entries(get.responses[0]!.headers)) if (!VARYING.has(k)) assert.equal(head!.headers[k], v, `header ${k}`);
    assert.match(head!.headers['content-length'] ?? '', /^\d+$/, 'Content-Length of the body a GET would get');
    if (path !== '/metrics') assert.equal(head!.headers['content-length'], String(Buffer.byteLength(get.responses[0]!.body)));
    assert.equal(after!.status, 200);
    assert.equal(after!.body, '{"status":"live"}');
  });
}

test('HEAD on an unknown path: 404 without a body', async () => {
  const r = await rawExchange(served.server.port, `HEAD /nope HTTP/1.1\r\nHost: x\r\n\r\n${LIVE}`, { want: 2, heads: 1 });
  assert.equal(r.responses[0]!.status, 404);
  assert.equal(r.responses[1]!.status, 200);
  assert.equal(r.responses[1]!.body, '{"status":"live"}');
});

test('OPTIONS on every path: 204 with Allow, no Content-Length, no body', async () => {
  const cases: [string, string][] = [
    ['/v1/models', 'GET, HEAD, OPTIONS'],
    ['/v1/chat/completions', 'POST, OPTIONS'],
    ['/admin/workers', 'GET, HEAD, POST, OPTIONS'],
    ['/admin/workers/3', 'DELETE, OPTIONS'],
    ['/health', 'GET, HEAD, OPTIONS'],
  ];
  for (const [path, allow] of cases) {
    const r = await rawExchange(served.server.port, `OPTIONS ${path} HTTP/1.1\r\nHost: x\r\n\r\n${LIVE}`, { want: 2 });
    const [opt, after] = r.responses;
    assert.equal(opt!.status, 204, path);
    assert.equal(opt!.headers.allow, allow, path);
    assert.equal(opt!.headers['content-length'], undefined, `${path}: a 204 has no Content-Length`);
    assert.equal(after!.body, '{"status":"live"}', `${path}: nothing after the 204's headers`);
  }
  const unknown = await rawExchange(served.server.port, 'OPTIONS /nope HTTP/1.1\r\nHost: x\r\n\r\n');
  assert.equal(unknown.responses[0]!.status, 404);
});

test('with --api-key, HEAD without the key is a 401 without a body; with CORS, a preflight gets the CORS headers and Allow', async () => {
  let s: Proc | undefined;
  try {
    s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1', '--api-key', 'k', '--cors-allow-origins', 'https://app.example']);
    const r = await rawExchange(s.port, `HEAD /v1/models HTTP/1.1\r\nHost: x\r\n\r\n${LIVE}`, { want: 2, heads: 1 });
    assert.equal(r.responses[0]!.status, 401);
    assert.equal(r.responses[0]!.headers['www-authenticate'], 'Bearer');
    assert.equal(r.responses[1]!.body, '{"status":"live"}');
    const ok = await fetch(`${s.url}/v1/models`, { method: 'HEAD', headers: { authorization: 'Bearer k' } });
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), '');

    const pre = await fetch(`${s.url}/v1/chat/completions`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal(pre.headers.get('access-control-allow-methods'), 'POST, OPTIONS');
    assert.equal(pre.headers.get('allow'), 'POST, OPTIONS');
  } finally {
    await s?.stop();
  }
});
