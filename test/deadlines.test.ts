// FixedDeadlines: one timer under many equal-duration deadlines (the engine streams'
// first-response deadline). Each case waits for the expiries themselves, never for a time.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FixedDeadlines } from '../src/engine/deadlines.js';

/**
 * `p`, with the event loop held open until it settles: the list's timer is unref'd (it keeps no
 * process alive, the last test checks that), and Node 20's test runner cancels a test whose
 * promise waits on nothing else.
 */
async function held<T>(p: Promise<T>): Promise<T> {
  const hold = setInterval(() => undefined, 60_000);
  try {
    return await p;
  } finally {
    clearInterval(hold);
  }
}

/** A list whose expiries are recorded (with when they fired) and awaitable one by one. */
function recorded(ms: number) {
  const fired: Array<{ owner: string; at: number }> = [];
  const waiters: Array<() => void> = [];
  const list = new FixedDeadlines<string>(ms, (owner) => {
    fired.push({ owner, at: performance.now() });
    waiters.shift()?.();
  });
  const nextExpiry = () => new Promise<void>((r) => waiters.push(r));
  return { list, fired, nextExpiry };
}

test('deadlines expire in the order they were added, never before their time, and a cancelled one never', async () => {
  const { list, fired, nextExpiry } = recorded(40);
  const waits = [nextExpiry(), nextExpiry()];
  const a = list.add('a');
  const b = list.add('b');
  const c = list.add('c');
  list.cancel(b);
  assert.equal(list.size, 2);
  await held(Promise.all(waits));
  assert.deepEqual(fired.map((f) => f.owner), ['a', 'c'], 'b was cancelled; a and c in order');
  assert.ok(fired[0]!.at >= a.at && fired[1]!.at >= c.at, 'none fired before its deadline');
  assert.equal(list.size, 0);
  list.cancel(a); // already expired: nothing happens
  assert.equal(list.size, 0);
});

test('cancelling the oldest: the timer fires for it anyway, finds a later one, and waits for that', async () => {
  const { list, fired, nextExpiry } = recorded(60);
  const first = list.add('first');
  await new Promise<void>((r) => setTimeout(r, 20)); // the second deadline comes later than the first
  const wait = nextExpiry();
  const second = list.add('second');
  assert.ok(second.at > first.at);
  list.cancel(first);
  await held(wait);
  assert.deepEqual(fired.map((f) => f.owner), ['second']);
  assert.ok(fired[0]!.at >= second.at, `fired at ${fired[0]!.at}, due at ${second.at}`);
});

test('a deadline added from an expiry, or after the list went empty, still expires', async () => {
  const fired: string[] = [];
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const list: FixedDeadlines<string> = new FixedDeadlines<string>(15, (owner) => {
    fired.push(owner);
    if (owner === 'one') list.add('two'); // added while the list expires its entries
    else done();
  });
  list.add('one');
  await held(finished);
  assert.deepEqual(fired, ['one', 'two']);
  const again = new Promise<void>((r) => (done = r));
  list.add('three'); // the list is empty and its timer gone: this one arms a new one
  await held(again);
  assert.deepEqual(fired, ['one', 'two', 'three']);
});

test('an armed list keeps no process alive', async () => {
  const { spawnSync } = await import('node:child_process');
  const url = new URL('../src/engine/deadlines.js', import.meta.url).href;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `import { FixedDeadlines } from '${url}'; new FixedDeadlines(60_000, () => {}).add('x');`], { timeout: 20_000 });
  assert.equal(r.status, 0, `the process exited at once (status ${r.status}, signal ${r.signal})`);
});
