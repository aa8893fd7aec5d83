// Fetching image bytes safely (src/pipeline/media-fetch.ts): data: URLs, remote URLs only
// when enabled, allowed domains, non-public addresses refused (literals, names resolving to
// them, and redirects to them) unless exempted, byte, time and redirect limits. Every
// refusal is a MediaFetchError whose message says why.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';

import { DEFAULT_MEDIA_FETCH, MediaFetchError, decodeDataUrl, fetchMedia, type MediaFetchPolicy } from '../src/pipeline/media-fetch.js';

let server: http.Server;
let base = '';
const held: http.ServerResponse[] = [];
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

before(async () => {
  server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/img') return res.end(PNG_MAGIC);
    if (path === '/big') return res.end(Buffer.alloc(5000));
    if (path === '/big-chunked') {
      res.write(Buffer.alloc(3000));
      return res.end(Buffer.alloc(3000));
    }
    if (path === '/hang') return void held.push(res);
    if (path === '/404') return res.writeHead(404).end();
    if (path === '/to-img') return res.writeHead(302, { location: '/img' }).end();
    if (path === '/to-private') return res.writeHead(302, { location: 'http://10.0.0.1/img' }).end();
    if (path === '/to-metadata') return res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    if (path === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    res.writeHead(500).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  for (const r of held) r.destroy();
  server.close();
});

/** Remote on, this test server's loopback address exempt. */
const local: MediaFetchPolicy = { ...DEFAULT_MEDIA_FETCH, remote: true, allowedAddresses: ['127.0.0.1'], maxBytes: 4096, timeoutMs: 2000 };

const refuses = (p: Promise<unknown>, why: RegExp) => assert.rejects(p, (e: unknown) => e instanceof MediaFetchError && why.test(e.message));

test('data: URLs decode; bad ones are refused with the reason', async () => {
  assert.deepEqual(await fetchMedia(`data:image/png;base64,${PNG_MAGIC.toString('base64')}`, DEFAULT_MEDIA_FETCH), PNG_MAGIC);
  assert.deepEqual(decodeDataUrl(`data:;base64,${PNG_MAGIC.toString('base64url')}`, 100), PNG_MAGIC);
  assert.throws(() => decodeDataUrl('data:image/png,rawtext', 100), /must be base64/);
  assert.throws(() => decodeDataUrl('data:image/png;base64,@@@@', 100), /not valid base64/);
  const b64 = PNG_MAGIC.toString('base64');
  for (const bad of [`${b64.slice(0, 4)} ${b64.slice(4)}`, `${b64.slice(0, 4)}=${b64.slice(5)}`, `${b64}\n`, `${b64}A`, `${b64.slice(0, 8)}*${b64.slice(9)}`]) {
    assert.throws(() => decodeDataUrl(`data:image/png;base64,${bad}`, 100), /not valid base64/, JSON.stringify(bad));
  }
  assert.throws(() => decodeDataUrl('data:image/png;base64', 100), /malformed/);
  assert.throws(() => decodeDataUrl(`data:image/png;base64,${Buffer.alloc(200).toString('base64')}`, 100), /over the 100-byte limit/);
});

test('remote URLs are refused unless enabled', async () => {
  await refuses(fetchMedia(`${base}/img`, DEFAULT_MEDIA_FETCH), /not enabled/);
});

test('an exempt address is fetched, redirects followed', async () => {
  assert.deepEqual(await fetchMedia(`${base}/img`, local), PNG_MAGIC);
  assert.deepEqual(await fetchMedia(`${base}/to-img`, local), PNG_MAGIC);
});

test('loopback, private, link-local and metadata addresses are refused, as literals and by name', async () => {
  const open: MediaFetchPolicy = { ...local, allowedAddresses: [] };
  await refuses(fetchMedia(`${base}/img`, open), /127\.0\.0\.1 is not a public address/);
  await refuses(fetchMedia('http://[::1]:1/img', open), /::1 is not a public address/);
  await refuses(fetchMedia('http://[::ffff:10.1.2.3]/img', open), /is not a public address/);
  await refuses(fetchMedia('http://[::ffff:7f00:1]:1/img', open), /is not a public address/);
  await refuses(fetchMedia('http://0.0.0.0:1/img', open), /0\.0\.0\.0 is not a public address/);
  await refuses(fetchMedia('http://169.254.169.254/latest/meta-data/', open), /not a public address/);
  await refuses(fetchMedia('http://192.168.1.10/x.png', open), /not a public address/);
  await refuses(fetchMedia(`http://localhost:${new URL(base).port}/img`, open), /localhost resolves to .*not a public address/);
});

test('a redirect to a non-public address is refused even from an exempt one', async () => {
  await refuses(fetchMedia(`${base}/to-private`, local), /10\.0\.0\.1 is not a public address/);
  await refuses(fetchMedia(`${base}/to-metadata`, local), /169\.254\.169\.254 is not a public address/);
});

test('the domain allow-list: the name and its subdomains only', async () => {
  const p: MediaFetchPolicy = { ...local, allowedDomains: ['example.com'] };
  await refuses(fetchMedia(`${base}/img`, p), /127\.0\.0\.1 is not an allowed media domain/);
  await refuses(fetchMedia('https://example.com.evil.net/a.png', p), /example\.com\.evil\.net is not an allowed media domain/);
  await refuses(fetchMedia('https://notexample.com/a.png', p), /not an allowed media domain/);
});

test('byte, time and redirect limits; HTTP errors; schemes and credentials', async () => {
  await refuses(fetchMedia(`${base}/big`, local), /over the 4096-byte limit/);
  await refuses(fetchMedia(`${base}/big-chunked`, local), /over the 4096-byte limit/);
  await refuses(fetchMedia(`${base}/hang`, { ...local, timeoutMs: 300 }), /timed out after 300 ms/);
  await refuses(fetchMedia(`${base}/loop`, local), /more than 3 redirects/);
  await refuses(fetchMedia(`${base}/404`, local), /HTTP 404/);
  await refuses(fetchMedia('ftp://example.com/a.png', local), /scheme ftp: is not supported/);
  await refuses(fetchMedia('file:///etc/passwd', local), /scheme file: is not supported/);
  await refuses(fetchMedia(`http://user:pw@127.0.0.1:${new URL(base).port}/img`, local), /credentials/);
  await refuses(fetchMedia('http://[not-a-url', local), /malformed image URL/);
});
