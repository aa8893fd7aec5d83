// pumpStream: a stream that can only be read (Connect's, test fakes) pushed into a listener
// with hold/release, as runGeneration reads every engine stream. Nothing may arrive while the
// listener holds, not even the message or the end a read already under way brings.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { pumpStream } from '../src/engine/grpc-h2.js';

/** An iterator whose reads the test answers one by one. */
function manual<T>() {
  const reads: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void }[] = [];
  let waiting: (() => void) | null = null;
  const it: AsyncIterator<T> = {
    next: () =>
      new Promise<IteratorResult<T>>((resolve, reject) => {
        reads.push({ resolve, reject });
        waiting?.();
      }),
  };
  const read = async () => {
    while (reads.length === 0) await new Promise<void>((r) => (waiting = r));
    return reads.shift()!;
  };
  return { it, read };
}

test('messages in order; none while held, even one whose read was under way; then the end', async () => {
  const { it, read } = manual<number>();
  const seen: string[] = [];
  let held = false;
  let ended!: () => void;
  const done = new Promise<void>((r) => (ended = r));
  const p = pumpStream(it, {
    message: (m) => {
      assert.equal(held, false, `message ${m} arrived while held`);
      seen.push(`m${m}`);
    },
    end: () => {
      assert.equal(held, false, 'the end arrived while held');
      seen.push('end');
      ended();
    },
    fail: (err) => assert.fail(String(err)),
  });
  (await read()).resolve({ value: 1, done: false });
  const second = await read(); // the pump reads on at once
  p.hold();
  held = true;
  second.resolve({ value: 2, done: false });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen, ['m1']);
  held = false;
  p.release();
  const third = await read();
  p.hold();
  held = true;
  third.resolve({ value: undefined, done: true });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen, ['m1', 'm2']);
  held = false;
  p.release();
  await done;
  assert.deepEqual(seen, ['m1', 'm2', 'end']);
});

test('a failed read is the listener\'s failure, once, and reading stops', async () => {
  const { it, read } = manual<number>();
  const failures: unknown[] = [];
  pumpStream(it, { message: () => assert.fail('no message'), end: () => assert.fail('no end'), fail: (e) => failures.push(e) });
  const err = new Error('reset');
  (await read()).reject(err);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(failures, [err]);
});
