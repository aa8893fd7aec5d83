// RequestCancellation (src/http/request-cancellation.ts) stands in for an AbortSignal on
// the generation path: each case below holds it to what an AbortController's signal does.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { RequestCancellation } from '../src/http/request-cancellation.js';

test('listeners run once each, in the order they were added, and a second abort runs none', () => {
  const ac = new AbortController();
  const rc = new RequestCancellation();
  for (const [target, abort, log] of [[ac.signal, () => ac.abort(), [] as string[]], [rc, () => rc.abort(), [] as string[]]] as const) {
    target.addEventListener('abort', () => log.push('a'), { once: true });
    target.addEventListener('abort', () => log.push('b'), { once: true });
    abort();
    abort();
    assert.deepEqual(log, ['a', 'b']);
  }
});

test('aborted and reason match an aborted AbortSignal', () => {
  const ac = new AbortController();
  const fresh = new RequestCancellation();
  assert.equal(fresh.aborted, ac.signal.aborted);
  assert.equal(fresh.reason, ac.signal.reason);
  const rc = new RequestCancellation();
  ac.abort();
  rc.abort();
  assert.equal(rc.aborted, true);
  const reason: unknown = rc.reason;
  assert.ok(reason instanceof DOMException);
  assert.equal(reason.name, (ac.signal.reason as DOMException).name);
  assert.equal(reason.message, (ac.signal.reason as DOMException).message);
});

test('a removed listener is not called; removing an unknown one is harmless', () => {
  const rc = new RequestCancellation();
  const log: string[] = [];
  const a = () => log.push('a');
  const b = () => log.push('b');
  rc.removeEventListener('abort', a);
  rc.addEventListener('abort', a);
  rc.addEventListener('abort', b);
  rc.removeEventListener('abort', a);
  rc.abort();
  assert.deepEqual(log, ['b']);
});

test('the same listener added twice runs once, as on an EventTarget', () => {
  const rc = new RequestCancellation();
  let n = 0;
  const f = () => n++;
  rc.addEventListener('abort', f);
  rc.addEventListener('abort', f);
  rc.abort();
  assert.equal(n, 1);
});

test('a listener added after the abort is never called', () => {
  const rc = new RequestCancellation();
  rc.abort();
  let called = false;
  rc.addEventListener('abort', () => (called = true));
  rc.abort();
  assert.equal(called, false);
});

test('a throwing listener does not stop the others and surfaces as an uncaught exception', async () => {
  const rc = new RequestCancellation();
  const log: string[] = [];
  rc.addEventListener('abort', () => {
    throw new Error('boom');
  });
  rc.addEventListener('abort', () => log.push('after'));
  // The test runner's own handler would count the exception against this test: hold it
  // back while this one catches it.
  const runners = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  try {
    const uncaught: string[] = [];
    process.on('uncaughtException', (err) => uncaught.push(err.message));
    rc.abort();
    assert.deepEqual(log, ['after']);
    await new Promise((r) => setImmediate(r)); // past the tick that reports it
    assert.deepEqual(uncaught, ['boom']);
  } finally {
    process.removeAllListeners('uncaughtException');
    for (const f of runners) process.on('uncaughtException', f);
  }
});
