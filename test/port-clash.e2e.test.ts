// A taken port is an error: a second `portico serve` on a port another server listens on
// exits non-zero with a message naming the port, whether either runs one shard or
// several (uSockets' SO_REUSEPORT would otherwise let it bind beside the first and the
// kernel would split connections silently). The first server keeps serving.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { QWEN3, ROOT, runPortico, startPortico } from './helpers/portico.js';
import { assertSoleListener, PortInUseError } from '../src/http/port-guard.js';
import { uwsBinaryPath } from '../src/http/uws-path.js';

const serveArgs = (port: number, shards: number) => ['serve', '--http-port', String(port), '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1', '--shards', String(shards)];

/** A port free now (the kernel's pick), for servers that must share a fixed one. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function assertServes(url: string): Promise<void> {
  const r = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }) });
  assert.equal(r.status, 200, await r.text());
}

for (const [first, second] of [
  [1, 1],
  [1, 2],
  [2, 1],
  [2, 2],
] as const) {
  test(`a server with ${second} shard(s) on the port of a running one with ${first}: exit non-zero, naming the port`, async (t) => {
    const port = await freePort();
    const a = await startPortico(serveArgs(port, first), { PORTICO_SHARDS: String(first) });
    t.after(() => a.stop());
    const b = await runPortico(serveArgs(port, second), { PORTICO_SHARDS: String(second) });
    assert.notEqual(b.code, 0, b.stdout + b.stderr);
    assert.match(b.stdout + b.stderr, new RegExp(`port ${port}\\b.*in use`));
    assert.doesNotMatch(b.stdout, /listening on/);
    // The first server is untouched, and answers every connection (none went to the second).
    for (let i = 0; i < 4; i++) await assertServes(a.url);
  });
}

test('the listener check finds another process that joined the port with SO_REUSEPORT', async (t) => {
  // A foreign process listening with SO_REUSEPORT (uWS's default on a named port), as a
  // second server would after a probe race.
  const port = await freePort();
  const script = `const u=require(${JSON.stringify(uwsBinaryPath())});u.App().listen('127.0.0.1',${port},s=>{console.log(s?'up':'down')})`;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill());
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  assert.equal(line.toString().trim(), 'up');
  assert.throws(() => assertSoleListener('127.0.0.1', port), (err: unknown) => err instanceof PortInUseError && new RegExp(`port ${port} `).test(err.message));
  assert.throws(() => assertSoleListener('0.0.0.0', port), PortInUseError);
  // A port nobody else listens on passes.
  assertSoleListener('127.0.0.1', await freePort());
});
