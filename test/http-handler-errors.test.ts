// No exception thrown inside a request handler ends the process: the HTTP server (a real
// uWS app on a real port) turns it into a 500 for that request, logged with the request
// id, and goes on serving. Thrown synchronously, rejected later, after the body was read,
// or on a HEAD: each is a 500 (without a body for HEAD). If the guard failed, this test's
// own process would die.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHttpServer, type HttpServer } from '../src/http/server.js';
import type { Route } from '../src/api/exchange.js';
import { rawExchange } from './helpers/raw-http.js';

let server: HttpServer;
const logged: string[] = [];
const realWrite = process.stderr.write.bind(process.stderr);

before(async () => {
  const routes: Route[] = [
    {
      method: 'get',
      path: '/sync',
      handler: () => {
        throw new TypeError('boom (sync)');
      },
    },
    { method: 'get', path: '/async', handler: async () => Promise.reject(new RangeError('boom (async)')) },
    {
      method: 'post',
      path: '/body',
      handler: (ex) => {
        JSON.parse(ex.body.toString()).missing.field;
      },
    },
    { method: 'get', path: '/ok', handler: (ex) => ex.sendJson(200, '{"ok":true}') },
  ];
  server = await startHttpServer({ host: '127.0.0.1', port: 0, routes });
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return (realWrite as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
});

after(() => {
  process.stderr.write = realWrite;
  server.close();
});

async function ok(): Promise<void> {
  const r = await fetch(`http://127.0.0.1:${server.port}/ok`);
  assert.equal(r.status, 200);
  assert.deepEqual(await r.json(), { ok: true });
}

for (const [method, path, body] of [
  ['GET', '/sync', undefined],
  ['GET', '/async', undefined],
  ['POST', '/body', '{}'],
] as const) {
  test(`${method} ${path}: a thrown error is a 500 with the request id, logged, and the server goes on`, async () => {
    const id = `req-${path.slice(1)}-1`;
    const r = await fetch(`http://127.0.0.1:${server.port}${path}`, { method, body, headers: { 'x-request-id': id } });
    assert.equal(r.status, 500);
    assert.equal(r.headers.get('x-request-id'), id);
    const err = (await r.json()).error;
    assert.equal(err.type, 'internal_error');
    assert.ok(logged.some((l) => l.includes('request failed') && l.includes(id)), `logged with the request id: ${logged.join('')}`);
    await ok();
  });
}

test('HEAD on a route whose handler throws: 500 without a body', async () => {
  const r = await rawExchange(server.port, 'HEAD /sync HTTP/1.1\r\nHost: x\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n', { want: 2, heads: 1 });
  assert.equal(r.responses[0]!.status, 500);
  assert.equal(r.responses[1]!.body, '{"ok":true}');
});
