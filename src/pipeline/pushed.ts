// An engine stream in push mode (EngineEvents), whatever the client returned: the gRPC
// clients' own streams push already; any other AsyncIterable is pumped.

import type { EngineEvent } from '../engine/types.js';
import { isEngineEvents, type EngineEventHandler, type EngineEvents } from '../engine/generate-stream.js';
import { pumpStream } from '../engine/grpc-h2.js';

/** The engine client's stream in push mode: its own, or its iterator read one message at a time. */
export function pushed(s: AsyncIterable<EngineEvent>): EngineEvents {
  if (isEngineEvents(s)) return s;
  const it = s[Symbol.asyncIterator]();
  let holder: { hold(): void; release(): void } | undefined;
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: () => it.next(),
    return: async () => (await it.return?.()) ?? { value: undefined, done: true },
    pipe(h) {
      holder = pumpStream(it, { message: (ev) => h.event(ev), end: () => h.end(), fail: (err) => h.fail(err) });
    },
    hold: () => holder?.hold(),
    release: () => holder?.release(),
  };
}

/** Pull-mode reading of a push stream: events queue (holding the stream past a few) until read. */
export class PullQueue implements EngineEventHandler {
  private readonly queue: EngineEvent[] = [];
  private waiter: { resolve(r: IteratorResult<EngineEvent>): void; reject(e: unknown): void } | null = null;
  private ended = false;
  private error: unknown = null;
  private held = false;

  constructor(private readonly s: { hold(): void; release(): void }) {}

  event(ev: EngineEvent): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w.resolve({ value: ev, done: false });
      return;
    }
    this.queue.push(ev);
    if (this.queue.length >= 16 && !this.held) {
      this.held = true;
      this.s.hold();
    }
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(err: unknown): void {
    this.error = err ?? new Error('engine stream failed');
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    if (!w) return;
    this.waiter = null;
    if (this.error !== null) w.reject(this.error);
    else w.resolve(DONE);
  }

  next(): Promise<IteratorResult<EngineEvent>> {
    const ev = this.queue.shift();
    if (ev !== undefined) {
      if (this.held && this.queue.length < 4) {
        this.held = false;
        this.s.release();
      }
      return Promise.resolve({ value: ev, done: false });
    }
    if (this.error !== null) return Promise.reject(this.error);
    if (this.ended) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }
}

const DONE: IteratorResult<EngineEvent> = Object.freeze({ value: undefined, done: true }) as IteratorResult<EngineEvent>;
