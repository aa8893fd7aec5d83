// Per-worker load, in one SharedArrayBuffer so several server shards (worker
// threads) can share it: every update is an Atomics add; reads are plain (see get).
// One row per worker slot.

export const enum LoadField {
  /** Prompt tokens dispatched and not yet past their first output token (uncached part). */
  PrefillTokens = 0,
  /** KV blocks held by requests in flight (prompt blocks, plus output blocks when tracked). */
  DecodeBlocks = 1,
  /** Requests in flight. */
  Requests = 2,
  /** KV capacity in blocks (0 = unknown). */
  CapacityBlocks = 3,
}

const FIELDS = 4;

export class LoadTable {
  readonly buffer: SharedArrayBuffer;
  private readonly cells: Int32Array;

  constructor(readonly capacity: number, buffer?: SharedArrayBuffer) {
    this.buffer = buffer ?? new SharedArrayBuffer(capacity * FIELDS * 4);
    this.cells = new Int32Array(this.buffer);
  }

  add(slot: number, f: LoadField, delta: number): void {
    if (delta !== 0) Atomics.add(this.cells, slot * FIELDS + f, delta);
  }

  /**
   * A plain read: aligned 32-bit reads cannot tear, and a routing heuristic does not
   * need Atomics.load's ordering (which V8 does not inline: it was most of the cost
   * of scoring 64 workers).
   */
  get(slot: number, f: LoadField): number {
    return this.cells[slot * FIELDS + f]!;
  }

  set(slot: number, f: LoadField, v: number): void {
    Atomics.store(this.cells, slot * FIELDS + f, v);
  }

  clear(slot: number): void {
    for (let f = 0; f < FIELDS; f++) Atomics.store(this.cells, slot * FIELDS + f, 0);
  }
}
