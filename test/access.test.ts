// The pieces of the admin-surface check that need no server: which peer addresses are
// loopback (as uWS gives them: 4 bytes, or 16 on a dual-stack socket), which content
// types count as JSON, and which worker URLs the admin API accepts and in what form.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isIPv4, isIPv6 } from 'node:net';
import { isLoopback, jsonContentType } from '../src/http/access.js';
import { canonicalWorkerUrl, withoutCredentials } from '../src/api/worker-url.js';
import { ApiError } from '../src/protocol/errors.js';

/** An address's bytes, as uWS's getRemoteAddress() gives them. */
function bytes(addr: string): Uint8Array {
  if (isIPv4(addr)) return Uint8Array.from(addr.split('.').map(Number));
  assert.ok(isIPv6(addr), addr);
  let [head, tail] = addr.split('::') as [string, string | undefined];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(addr)?.[1];
  const groups = (s: string | undefined) => (s ? s.split(':').filter((g) => g !== '' && !g.includes('.')) : []);
  if (dotted) {
    if (tail !== undefined) tail = tail.slice(0, -dotted.length);
    else head = head.slice(0, -dotted.length);
  }
  const h = groups(head);
  const t = groups(tail);
  const v4 = dotted ? dotted.split('.').map(Number) : [];
  const fill = 8 - h.length - t.length - v4.length / 2;
  const all = [...h, ...(tail !== undefined ? Array(fill).fill('0') : []), ...t].map((g) => parseInt(g, 16));
  const out = new Uint8Array(16);
  all.forEach((g, i) => ((out[i * 2] = g >> 8), (out[i * 2 + 1] = g & 0xff)));
  out.set(v4, 16 - v4.length);
  return out;
}

test('loopback peers: 127.0.0.0/8, ::1 and IPv4-mapped 127.x; nothing else', () => {
  for (const a of ['127.0.0.1', '127.0.0.2', '127.255.255.254', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:127.1.2.3', '0:0:0:0:0:ffff:7f00:1']) {
    assert.equal(isLoopback(bytes(a)), true, a);
  }
  for (const a of ['10.0.0.1', '192.0.2.2', '0.0.0.0', '128.0.0.1', '::', '::2', '::ffff:10.0.0.1', '::ffff:192.0.2.2', 'fd00::2', 'fe80::1', '::127.0.0.1', '1::1', '::1:0:1', '64:ff9b::127.0.0.1', '2001:db8::7f00:1']) {
    assert.equal(isLoopback(bytes(a)), false, a);
  }
  assert.equal(isLoopback(new Uint8Array(0)), false, 'no address (a closed socket)');
});

test('JSON content types', () => {
  for (const v of ['application/json', 'Application/JSON', 'application/json; charset=utf-8', ' application/json ;charset=UTF-8']) assert.equal(jsonContentType(v, true), true, v);
  for (const v of ['', 'text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp', 'application/json-patch+json', 'text/json']) assert.equal(jsonContentType(v, true), false, v);
  assert.equal(jsonContentType('', false), true, 'no body, no type: allowed where no body is required');
  assert.equal(jsonContentType('text/plain', false), false);
});

test('worker URLs are canonicalised', () => {
  const cases: [string, string][] = [
    ['grpc://127.0.0.1:50051', 'grpc://127.0.0.1:50051'],
    ['GRPC://Worker-1.Example.COM:50051/', 'grpc://worker-1.example.com:50051'],
    ['vllm+grpc://h:0080', 'vllm+grpc://h:80'],
    ['grpc://h:0050051', 'grpc://h:50051'],
    ['Vllm+Grpc://H:1', 'vllm+grpc://h:1'],
    ['grpcs://h:443', 'grpcs://h:443'],
    ['grpc://127.1:9', 'grpc://127.0.0.1:9'],
    ['grpc://[0:0::1]:9', 'grpc://[::1]:9'],
    ['grpc://[FD00::2]:9/', 'grpc://[fd00::2]:9'],
  ];
  for (const [raw, want] of cases) assert.equal(canonicalWorkerUrl(raw), want, raw);
});

test('bad worker URLs are 400s that never repeat the URL', () => {
  const cases: [string, RegExp][] = [
    ['http://h:1', /scheme "http"/],
    ['https://h:1', /scheme "https"/],
    ['ftp://h:1', /scheme "ftp"/],
    ['grpc://user:s3cret@h:1', /credentials/],
    ['grpc://s3cret@h:1', /credentials/],
    ['grpc://:s3cret@h:1', /credentials/],
    ['grpc://h', /no port/],
    ['grpc://h:', /invalid host or port/],
    ['grpc://h:0', /outside 1-65535/],
    ['grpc://h:65536', /outside 1-65535/],
    ['grpc://h:123456', /outside 1-65535/],
    ['grpc://h:12345678901', /invalid host or port/],
    ['grpc://h:1/s3cret', /path, query or fragment/],
    ['grpc://h:1?token=s3cret', /path, query or fragment/],
    ['grpc://h:1#s3cret', /path, query or fragment/],
    ['grpc://h:1//', /path, query or fragment/],
    ['grpc://', /no port/],
    ['grpc://:1', /invalid host or port/],
    ['grpc://h s3cret:1', /spaces or control/],
    ['grpc://h:1\n', /spaces or control/],
    ['grpc:h:1', /not an absolute URL/],
    ['h:1', /not an absolute URL/],
    ['h://x:1', /scheme "h"/],
    ['s3cret', /not an absolute URL/],
    ['grpc://[::1:1', /invalid host or port/],
    ['grpc://[zz::1]:1', /invalid host or port/],
    ['grpc://[::g]:1', /invalid host or port/],
    ['grpc://256.1.1.1:1', /invalid host/],
    ['grpc://h%41:1', /invalid host or port/],
    [`grpc://${'a'.repeat(3000)}:1`, /too long/],
  ];
  for (const [raw, message] of cases) {
    assert.throws(
      () => canonicalWorkerUrl(raw),
      (e: unknown) => {
        assert.ok(e instanceof ApiError, raw);
        assert.equal(e.status, 400, raw);
        assert.equal(e.param, 'url');
        assert.match(e.message, message, raw);
        assert.ok(!e.message.includes('s3cret'), `${raw}: ${e.message}`);
        return true;
      },
      raw,
    );
  }
});

test('a listed worker URL loses any credentials it was started with', () => {
  assert.equal(withoutCredentials('grpc://u:s3cret@h:1'), 'grpc://h:1');
  assert.equal(withoutCredentials('vllm+grpc://s3cret@h:1/'), 'vllm+grpc://h:1/');
  assert.equal(withoutCredentials('grpc://h:1'), 'grpc://h:1');
  assert.equal(withoutCredentials('grpc://h:1/a@b'), 'grpc://h:1/a@b', 'an @ past the authority is not userinfo');
});
