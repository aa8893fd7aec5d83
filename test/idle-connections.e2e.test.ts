// 1,000 connections that connect and send nothing do not delay anyone else: with all of
// them open, a normal request on a new connection is answered, and the server later
// closes the idle ones itself (uWS's idle timeout), so they cost nothing for long.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';

const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1']);

const IDLE = 1000;

test(`${IDLE} idle connections: a normal request is still answered, and the server closes the idle ones`, async () => {
  const socks: Socket[] = [];
  const closes: Promise<unknown>[] = [];
  try {
    // Opened in batches so the listen backlog never overflows (a refused connect is not what is tested).
    for (let i = 0; i < IDLE; i += 100) {
      const batch = Array.from({ length: 100 }, () => {
        const s = connect(served.server.port, '127.0.0.1');
        s.on('error', () => {});
        socks.push(s);
        closes.push(once(s, 'close'));
        return once(s, 'connect');
      });
      await Promise.all(batch);
    }
    assert.equal(socks.length, IDLE);

    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${served.server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }) });
      const text = await r.text();
      assert.equal(r.status, 200, text);
      assert.equal(JSON.parse(text).object, 'chat.completion');
    }
    const health = await fetch(`${served.server.url}/health`);
    assert.equal(health.status, 200);
    await health.text();

    // The server closes connections that never sent a request (uWS's idle timeout, ~10 s).
    await Promise.all(closes);
    assert.equal(served.server.child.exitCode, null);
  } finally {
    for (const s of socks) s.destroy();
  }
});
