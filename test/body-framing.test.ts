// framingOf(): the framing decision for a request with a body, from its raw header lines
// (lower-cased names, every line as uWS hands them, duplicates included).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { framingOf } from '../src/http/body-reader.js';

const LIMIT = 1000;
const h = (...pairs: string[]) => pairs;

test('a Content-Length of 1*DIGIT within the limit is the body length; none is 0', () => {
  assert.deepEqual(framingOf(h('host', 'x', 'content-length', '12'), LIMIT), { ok: true, length: 12 });
  assert.deepEqual(framingOf(h('content-length', '0'), LIMIT), { ok: true, length: 0 });
  assert.deepEqual(framingOf(h('content-length', ' 007 '), LIMIT), { ok: true, length: 7 });
  assert.deepEqual(framingOf(h('host', 'x'), LIMIT), { ok: true, length: 0 });
  assert.deepEqual(framingOf(h('content-length', '5', 'content-length', '5'), LIMIT), { ok: true, length: 5 });
  assert.deepEqual(framingOf(h('content-length', '5, 5'), LIMIT), { ok: true, length: 5 });
});

test('anything else in Content-Length is a 400 invalid_content_length', () => {
  for (const v of ['abc', '-1', '1x', 'NaN', '1_0', '+5', '0x5', '1e1', '1.0', '', ' ', '5,', ',5', '5,,5', '\u0663', '\uff15', '1234567890123456', '99999999999999999999999']) {
    const f = framingOf(h('content-length', v), LIMIT);
    assert.equal(f.ok, false, v);
    if (!f.ok) {
      assert.equal(f.status, 400, v);
      assert.equal(f.code, 'invalid_content_length', v);
    }
  }
  const dup = framingOf(h('content-length', '5', 'content-length', '6'), LIMIT);
  assert.deepEqual(dup.ok ? null : [dup.status, dup.code, dup.message], [400, 'invalid_content_length', 'conflicting Content-Length headers']);
  const list = framingOf(h('content-length', '5, 6'), LIMIT);
  assert.equal(list.ok ? 0 : list.status, 400);
});

test('past the limit is a 413; the limit itself is served', () => {
  assert.deepEqual(framingOf(h('content-length', String(LIMIT)), LIMIT), { ok: true, length: LIMIT });
  const f = framingOf(h('content-length', String(LIMIT + 1)), LIMIT);
  assert.deepEqual(f.ok ? null : [f.status, f.code], [413, 'payload_too_large']);
});

test('Transfer-Encoding: chunked alone is a body of unknown length; with Content-Length, or other codings, refused', () => {
  assert.deepEqual(framingOf(h('transfer-encoding', 'chunked'), LIMIT), { ok: true, length: null });
  assert.deepEqual(framingOf(h('transfer-encoding', ' Chunked '), LIMIT), { ok: true, length: null });
  const cases: [string[], number, string][] = [
    [h('content-length', '5', 'transfer-encoding', 'chunked'), 400, 'invalid_framing'],
    [h('transfer-encoding', 'chunked', 'content-length', '5'), 400, 'invalid_framing'],
    [h('transfer-encoding', 'gzip, chunked'), 501, 'unsupported_transfer_encoding'],
    [h('transfer-encoding', 'gzip', 'transfer-encoding', 'chunked'), 501, 'unsupported_transfer_encoding'],
    [h('transfer-encoding', 'chunked, gzip'), 400, 'invalid_framing'],
    [h('transfer-encoding', 'chunked, chunked'), 400, 'invalid_framing'],
    [h('transfer-encoding', ''), 400, 'invalid_framing'],
  ];
  for (const [headers, status, code] of cases) {
    const f = framingOf(headers, LIMIT);
    assert.deepEqual(f.ok ? null : [f.status, f.code], [status, code], headers.join(' '));
  }
});

test('Expect: 100-continue passes; any other expectation is a 417', () => {
  assert.deepEqual(framingOf(h('content-length', '5', 'expect', '100-Continue'), LIMIT), { ok: true, length: 5 });
  const f = framingOf(h('content-length', '5', 'expect', 'fly'), LIMIT);
  assert.deepEqual(f.ok ? null : [f.status, f.code], [417, 'expectation_failed']);
});
