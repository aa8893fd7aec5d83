// Replica sync's messages (src/events/replica-messages.ts) as a receiver decodes them off
// NATS, where anyone can publish anything: what a replica sends decodes to itself, and a
// message with any part malformed is rejected whole, so no part of it is applied. (The
// end-to-end view, garbage published on a real nats-server adding no load to a real
// frontend, is in event-plane.e2e.test.ts.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeLoad, decodeRoute, encodeLoad, encodeRoute } from '../src/events/replica-messages.js';

const bytes = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const W0 = 'grpc://127.0.0.1:30000';
const W1 = 'grpc://127.0.0.1:30001';

test('a load snapshot a replica sends decodes to itself', () => {
  const s = { replica: 'r1', seq: 7, workers: [[W0, 2, 300, 20], [W1, 0, 0, 1]] as [string, number, number, number][] };
  assert.deepEqual(decodeLoad(bytes(encodeLoad(s))), s);
  assert.deepEqual(decodeLoad(bytes({ replica: 'r1', seq: 1, workers: [] })), { replica: 'r1', seq: 1, workers: [] }, 'nothing in flight');
});

test('a load snapshot with any malformed part is rejected whole', () => {
  const good = [W0, 1, 10, 2];
  const cases: [string, unknown][] = [
    ['not JSON', 'not json'],
    ['JSON that is not an object', [good]],
    ['null', null],
    ['no replica', { seq: 1, workers: [good] }],
    ['a replica that is not a string', { replica: 5, seq: 1, workers: [good] }],
    ['no seq', { replica: 'x', workers: [good] }],
    ['seq 0', { replica: 'x', seq: 0, workers: [good] }],
    ['a negative seq', { replica: 'x', seq: -1, workers: [good] }],
    ['a fractional seq', { replica: 'x', seq: 1.5, workers: [good] }],
    ['a seq past 2^53', { replica: 'x', seq: 2 ** 60, workers: [good] }],
    ['workers that is not an array', { replica: 'x', seq: 1, workers: { [W0]: 1 } }],
    ['a good row, then a negative count', { replica: 'x', seq: 1, workers: [good, [W1, -5, 0, 0]] }],
    ['a good row, then a count that is not a number', { replica: 'x', seq: 1, workers: [good, [W1, 1, 'a', 0]] }],
    ['a good row, then a count past the bound', { replica: 'x', seq: 1, workers: [good, [W1, 1, 0, 1e12]] }],
    ['a good row, then a fractional count', { replica: 'x', seq: 1, workers: [good, [W1, 0.5, 0, 0]] }],
    ['a good row, then a row without a URL', { replica: 'x', seq: 1, workers: [good, [1, 1, 0, 0]] }],
    ['a good row, then a short row', { replica: 'x', seq: 1, workers: [good, [W1, 1, 0]] }],
    ['a good row, then a long row', { replica: 'x', seq: 1, workers: [good, [W1, 1, 0, 0, 9]] }],
    ['a good row, then a row that is not an array', { replica: 'x', seq: 1, workers: [good, { url: W1 }] }],
    ['one worker named twice (its load would be added twice and taken back once)', { replica: 'x', seq: 1, workers: [good, good] }],
  ];
  for (const [what, msg] of cases) assert.equal(decodeLoad(bytes(msg === null ? 'null' : msg)), null, what);
});

test('a routing decision a replica sends decodes to itself', () => {
  const keys = new Float64Array([1, 2 ** 40, Number.MAX_SAFE_INTEGER]);
  const m = decodeRoute(bytes(encodeRoute('r1', W0, 1, keys)))!;
  assert.deepEqual([m.replica, m.url, m.rank, [...m.keys]], ['r1', W0, 1, [...keys]]);
});

test('a routing decision with any malformed part is rejected whole', () => {
  const keys = (...k: number[]) => Buffer.from(new Float64Array(k).buffer).toString('base64');
  const cases: [string, unknown][] = [
    ['not JSON', 'not json'],
    ['a load snapshot', { replica: 'x', seq: 1, workers: [[W0, 1, 0, 0]] }],
    ['no url', { replica: 'x', rank: 0, keys: keys(1) }],
    ['a rank that is not an integer', { replica: 'x', url: W0, rank: 0.5, keys: keys(1) }],
    ['keys that are not a string', { replica: 'x', url: W0, rank: 0, keys: [1] }],
    ['keys that are not whole float64s', { replica: 'x', url: W0, rank: 0, keys: 'AAAA' }],
    ['a negative key', { replica: 'x', url: W0, rank: 0, keys: keys(1, -1) }],
    ['a fractional key', { replica: 'x', url: W0, rank: 0, keys: keys(1, 0.5) }],
    ['a key past 2^53', { replica: 'x', url: W0, rank: 0, keys: keys(1, 2 ** 60) }],
  ];
  for (const [what, msg] of cases) assert.equal(decodeRoute(bytes(msg)), null, what);
});
