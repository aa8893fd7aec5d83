// Per-worker load, in one SharedArrayBuffer so several server shards (worker
// threads) can share it: every update is an Atomics add; reads are plain (see get).
// One row per worker slot. Beside it, this thread's view of the load other frontend
// replicas put on the same workers (replica sync, src/events/replica-sync.ts): a plain
// per-thread overlay that get() adds in, so every routing decision and busy check sees
// both, while local() is what this process dispatched (what it publishes to the others).

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
  private readonly remote: Int32Array;

  constructor(readonly capacity: number, buffer?: SharedArrayBuffer) {
    this.buffer = buffer ?? new SharedArrayBuffer(capacity * FIELDS * 4);
    this.cells = new Int32Array(this.buffer);
    this.remote = new Int32Array(capacity * FIELDS);
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
    const i = slot * FIELDS + f;
    return this.cells[i]! + this.remote[i]!;
  }

  /** What this process (every shard) has in flight on the worker, without other replicas'. */
  local(slot: number, f: LoadField): number {
    return this.cells[slot * FIELDS + f]!;
  }

  /** Other replicas' load on the worker, as this thread last heard it. */
  remoteOf(slot: number, f: LoadField): number {
    return this.remote[slot * FIELDS + f]!;
  }

  addRemote(slot: number, f: LoadField, delta: number): void {
    this.remote[slot * FIELDS + f]! += delta;
  }

  /** Forget other replicas' load on a slot (its worker left, or the slot is reused). */
  clearRemote(slot: number): void {
    this.remote.fill(0, slot * FIELDS, slot * FIELDS + FIELDS);
  }

  set(slot: number, f: LoadField, v: number): void {
    Atomics.store(this.cells, slot * FIELDS + f, v);
  }

  clear(slot: number): void {
    for (let f = 0; f < FIELDS; f++) Atomics.store(this.cells, slot * FIELDS + f, 0);
  }
}
