// Sequencing of the simulator's KV events. Pool events of one engine step
// on one data-parallel rank become one batch with the next sequence number
// (one counter for the whole engine). Recent batches are kept for replay;
// a subscriber that asks for a sequence older than the buffer gets a
// snapshot of the live cache instead.

import type { PoolEvent } from './kv-pool.js';

export interface HubBatch {
  seq: number;
  /** Seconds since the epoch. */
  ts: number;
  dpRank: number;
  events: PoolEvent[];
}

export interface SnapshotBlock {
  dpRank: number;
  hash: number;
  parentHash: number | undefined;
  tokenIds: number[];
}

export class KvEventHub {
  private next = 1;
  private readonly buffer: HubBatch[] = [];
  private readonly pending = new Map<number, PoolEvent[]>();
  private readonly listeners = new Set<(b: HubBatch) => void>();
  /** Batches published so far. */
  published = 0;

  constructor(
    readonly blockSize: number,
    private readonly snapshotSource: () => SnapshotBlock[],
    private readonly bufferSize = 10_000,
  ) {}

  /** Sequence number of the last published batch (0 = none yet). */
  lastSeq(): number {
    return this.next - 1;
  }

  /** Record an event of `dpRank`; it goes out with the rank's next flush. */
  add(dpRank: number, e: PoolEvent): void {
    let list = this.pending.get(dpRank);
    if (!list) this.pending.set(dpRank, (list = []));
    list.push(e);
  }

  /** Publish what `dpRank` recorded since its last flush, as one batch. */
  flush(dpRank: number): void {
    const events = this.pending.get(dpRank);
    if (!events || events.length === 0) return;
    this.pending.delete(dpRank);
    const b: HubBatch = { seq: this.next++, ts: Date.now() / 1000, dpRank, events };
    this.buffer.push(b);
    // Trim in slices, not one batch per flush (splice is O(n)).
    if (this.buffer.length >= this.bufferSize + 1024) this.buffer.splice(0, this.buffer.length - this.bufferSize);
    this.published++;
    for (const l of this.listeners) l(b);
  }

  subscribe(l: (b: HubBatch) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Buffered batches from `seq` on, or undefined when `seq` is no longer buffered. */
  replayFrom(seq: number): HubBatch[] | undefined {
    if (seq > this.lastSeq()) return [];
    const i = this.buffer.findIndex((b) => b.seq >= seq);
    if (i < 0 || this.buffer[i]!.seq !== seq) return undefined;
    return this.buffer.slice(i);
  }

  /** Test hook: burn a sequence number, as if a batch were lost on the way. */
  dropNext(): void {
    this.next++;
  }

  snapshot(): SnapshotBlock[] {
    return this.snapshotSource();
  }
}
