// An in-memory view of which KV blocks each worker (and rank) holds, built
// from normalised KV events. The router's radix index is built on the same
// events; this is the simple form that proves ingestion is exact.

import type { KvEvent } from './types.js';

export class KvBlockSet {
  private readonly workers = new Map<string, Map<number, Map<bigint, bigint | undefined>>>();
  /** Resets applied, by reason. */
  readonly resets = new Map<string, number>();

  apply(events: readonly KvEvent[]): void {
    for (const e of events) this.applyOne(e);
  }

  applyOne(e: KvEvent): void {
    switch (e.kind) {
      case 'stored': {
        const m = this.rank(e.worker, e.dpRank);
        let parent = e.parentHash;
        for (const b of e.blocks) {
          m.set(b.hash, parent);
          parent = b.hash;
        }
        break;
      }
      case 'removed': {
        const m = this.rank(e.worker, e.dpRank);
        for (const h of e.hashes) m.delete(h);
        break;
      }
      case 'cleared':
        this.workers.get(e.worker)?.delete(e.dpRank);
        break;
      case 'reset':
        this.workers.delete(e.worker);
        this.resets.set(e.reason, (this.resets.get(e.reason) ?? 0) + 1);
        break;
    }
  }

  /** Hashes held by `worker` (one rank, or all ranks). */
  hashes(worker: string, dpRank?: number): Set<bigint> {
    const w = this.workers.get(worker);
    const out = new Set<bigint>();
    if (!w) return out;
    for (const [r, m] of w) if (dpRank === undefined || r === dpRank) for (const h of m.keys()) out.add(h);
    return out;
  }

  /** Parent of a block as last stored (undefined = root or unknown). */
  parentOf(worker: string, dpRank: number, hash: bigint): bigint | undefined {
    return this.workers.get(worker)?.get(dpRank)?.get(hash);
  }

  size(worker: string): number {
    let n = 0;
    for (const m of this.workers.get(worker)?.values() ?? []) n += m.size;
    return n;
  }

  private rank(worker: string, dpRank: number): Map<bigint, bigint | undefined> {
    let w = this.workers.get(worker);
    if (!w) this.workers.set(worker, (w = new Map()));
    let m = w.get(dpRank);
    if (!m) w.set(dpRank, (m = new Map()));
    return m;
  }
}
