// Predicted KV state for what events do not tell: workers that publish no KV
// events, and salted or adapter requests (events carry no namespace). At dispatch
// the request's blocks are inserted for the chosen worker; each expires after a
// TTL, refreshed when a later request predicts the same block there. (Workers that
// do publish events get a short-lived insert instead: inflight.ts.)

import type { KvIndex } from './kv-index.js';
import { slotOf } from './holders.js';

export class PredictedBlocks {
  /** Per holder (worker slot and DP rank, holders.ts): key → expiry (ms, monotonic). */
  private readonly slots = new Map<number, Map<number, number>>();
  private lastSweep = 0;

  constructor(
    private readonly index: KvIndex,
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  insert(slot: number, keys: Float64Array, ttlMs = this.ttlMs): void {
    const t = this.now();
    this.sweep(t);
    let m = this.slots.get(slot);
    if (!m) this.slots.set(slot, (m = new Map()));
    const exp = t + ttlMs;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const old = m.get(k);
      if (old === undefined) this.index.add(k, slot);
      if (old === undefined || old < exp) m.set(k, exp);
    }
  }

  /** Drop every expired block; runs at most every 100 ms (or TTL/8 when shorter). */
  sweep(t = this.now(), force = false): void {
    if (!force && t - this.lastSweep < Math.min(this.ttlMs / 8, 100)) return;
    this.lastSweep = t;
    for (const [slot, m] of this.slots) {
      for (const [k, exp] of m) {
        if (exp <= t) {
          m.delete(k);
          this.index.remove(k, slot);
        }
      }
    }
  }

  /** Forget every block predicted on a worker (any rank): it left. */
  drop(slot: number): void {
    for (const [holder, m] of this.slots) {
      if (slotOf(holder) !== slot) continue;
      for (const k of m.keys()) this.index.remove(k, holder);
      this.slots.delete(holder);
    }
  }

  count(holder: number): number {
    return this.slots.get(holder)?.size ?? 0;
  }
}
