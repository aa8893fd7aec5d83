// Blocks of requests just dispatched to workers that publish KV events, indexed for
// a short time (default 2 s) until the engine's own stored event arrives: a burst
// of requests sharing a new prefix then follows the first one. Every insert has the
// same lifetime, so expiry is a FIFO of batches — no per-block bookkeeping, which
// keeps this off the routing decision's cost (a per-block Map cost ~40 µs for a
// 128-block suffix).

import type { KvIndex } from './kv-index.js';
import { slotOf } from './holders.js';

interface Batch {
  /** Worker slot and DP rank (holders.ts). */
  slot: number;
  keys: Float64Array;
  expires: number;
}

export class InflightBlocks {
  private readonly fifo: Batch[] = [];
  private head = 0;

  constructor(
    private readonly index: KvIndex,
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get pending(): number {
    return this.fifo.length - this.head;
  }

  insert(slot: number, keys: Float64Array): void {
    if (keys.length === 0 || this.ttlMs <= 0) return;
    for (let i = 0; i < keys.length; i++) this.index.add(keys[i]!, slot);
    this.fifo.push({ slot, keys, expires: this.now() + this.ttlMs });
  }

  /** Drop the batches whose time is up. */
  sweep(t = this.now()): void {
    const f = this.fifo;
    while (this.head < f.length && f[this.head]!.expires <= t) {
      const b = f[this.head]!;
      f[this.head++] = undefined as unknown as Batch;
      for (let i = 0; i < b.keys.length; i++) this.index.remove(b.keys[i]!, b.slot);
    }
    if (this.head > 1024 && this.head * 2 > f.length) {
      f.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Forget a worker's batches, every rank (it left): their keys leave the index now. */
  drop(slot: number): void {
    for (let i = this.head; i < this.fifo.length; i++) {
      const b = this.fifo[i]!;
      if (slotOf(b.slot) !== slot) continue;
      for (let k = 0; k < b.keys.length; k++) this.index.remove(b.keys[k]!, b.slot);
      b.keys = new Float64Array(0);
    }
  }
}
