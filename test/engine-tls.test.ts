// grpcs:// workers: the engine client's HTTP/2 over TLS (ALPN h2, SNI for a host name, the
// certificate checked against the trusted roots). Each case runs in a child process
// (test/helpers/tls-worker-child.ts) so that NODE_EXTRA_CA_CERTS can make the test
// certificate (test/fixtures/tls, self-signed for localhost and 127.0.0.1) trusted.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Code } from '@connectrpc/connect';

const CHILD = fileURLToPath(new URL('./helpers/tls-worker-child.js', import.meta.url));
const CERT = fileURLToPath(new URL('../../test/fixtures/tls/worker.crt', import.meta.url));

interface Outcome { messages: string[]; error: { code: number; message: string } | null }

function run(mode: 'h2' | 'no-alpn', host: string, trusted: boolean): Promise<Outcome> {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  if (trusted) env.NODE_EXTRA_CA_CERTS = CERT;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CHILD, mode, host], { env, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`child failed: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Outcome);
    });
  });
}

describe('engine client over TLS (grpcs)', () => {
  test('a trusted worker by host name: the call goes through, with :scheme https', async () => {
    assert.deepEqual(await run('h2', 'localhost', true), { messages: ['one', 'https'], error: null });
  });

  test('a trusted worker by IP address (no SNI; the certificate names the IP)', async () => {
    assert.deepEqual(await run('h2', '127.0.0.1', true), { messages: ['one', 'https'], error: null });
  });

  test('an untrusted certificate fails the call, naming the certificate', async () => {
    const r = await run('h2', 'localhost', false);
    assert.deepEqual(r.messages, []);
    assert.ok(r.error && /certificate/i.test(r.error.message), JSON.stringify(r.error));
  });

  test('a TLS server that negotiates no HTTP/2 is unavailable, not a hang', async () => {
    const r = await run('no-alpn', 'localhost', true);
    assert.deepEqual(r.messages, []);
    assert.equal(r.error?.code, Code.Unavailable);
    assert.match(r.error!.message, /did not negotiate HTTP\/2/);
  });
});
