// The outgoing side of an HTTP/2 connection to a worker: frames queued within one tick
// leave in one socket write (one copy into one buffer when small; one writev of the
// buffers themselves when large, so an image's tensor is never copied), and request
// bodies that come in parts (an image's pixel tensor by reference) are sliced into DATA
// frames without copying.

import type { Socket } from 'node:net';

/** Above this many bytes a flush is one writev of its buffers instead of a copy into one. */
const LARGE_FLUSH = 64 * 1024;

/** A request body: one buffer, or parts sent one after the other. */
export type RequestBody = Buffer | readonly Buffer[];

export function bodyLength(b: RequestBody): number {
  if (Buffer.isBuffer(b)) return b.length;
  let n = 0;
  for (const p of b) n += p.length;
  return n;
}

/** Bytes [off, off + n) of a body in parts, handed to `push` as slices of the parts. */
export function pushSlices(parts: readonly Buffer[], off: number, n: number, push: (b: Buffer) => void): void {
  let base = 0;
  for (const p of parts) {
    const end = base + p.length;
    if (end > off && n > 0) {
      const from = Math.max(off - base, 0);
      const take = Math.min(p.length - from, n);
      push(p.subarray(from, from + take));
      off += take;
      n -= take;
    }
    if (n === 0) return;
    base = end;
  }
}

/** Frames waiting for the end of the tick. */
export class FrameQueue {
  private out: Buffer[] = [];
  private queued = false;

  constructor(private readonly socket: Socket) {}

  /** Queue `b`; everything queued in one tick goes out in one socket write. */
  push(b: Buffer): void {
    this.out.push(b);
    if (!this.queued) {
      this.queued = true;
      process.nextTick(flushQueue, this);
    }
  }

  /** Write what is queued now. */
  flush(): void {
    this.queued = false;
    const out = this.out;
    if (out.length === 0 || this.socket.destroyed) {
      out.length = 0;
      return;
    }
    this.out = [];
    if (out.length === 1) {
      this.socket.write(out[0]!);
      return;
    }
    let total = 0;
    for (const b of out) total += b.length;
    if (total <= LARGE_FLUSH) {
      this.socket.write(Buffer.concat(out, total));
      return;
    }
    this.socket.cork();
    for (const b of out) this.socket.write(b);
    this.socket.uncork();
  }
}

function flushQueue(q: FrameQueue): void {
  q.flush();
}
