// Session affinity shared by server shards (--shards): the same pins as
// SessionAffinity, kept in a SharedArrayBuffer so a session pinned by one shard is
// found by every shard. A direct-mapped table: a session's 64-bit hash picks one
// entry; a different session hashing to the same entry replaces it (the evicted
// session is simply routed afresh). Each entry has a version word used as a try-lock
// (odd while written): a writer that finds it taken skips its pin, a reader that sees
// it change misses. Times are wall-clock ms (performance.now() differs per thread).

const WORDS = 6; // version, hash hi, hash lo, worker id, expiry (Float64 over two words)

export class SharedSessionAffinity {
  private readonly words: Int32Array;
  private readonly expiry: Float64Array;
  readonly capacity: number;

  /** A table for `capacity` entries (a power of two). */
  static buffer(capacity = 1 << 16): SharedArrayBuffer {
    return new SharedArrayBuffer(capacity * WORDS * 4);
  }

  constructor(
    buffer: SharedArrayBuffer,
    readonly ttlMs: number,
    private readonly now: () => number = () => performance.timeOrigin + performance.now(),
  ) {
    this.words = new Int32Array(buffer);
    this.expiry = new Float64Array(buffer);
    this.capacity = buffer.byteLength / (WORDS * 4);
    if (!Number.isInteger(Math.log2(this.capacity))) throw new Error('shared session table: capacity must be a power of two');
  }

  lookup(session: string): number | undefined {
    const [hi, lo] = hash(session);
    const base = (lo & (this.capacity - 1)) * WORDS;
    const w = this.words;
    const v = Atomics.load(w, base);
    if (v & 1) return undefined;
    const match = w[base + 1] === hi && w[base + 2] === lo;
    const worker = w[base + 3]!;
    const expires = this.expiry[(base + 4) / 2]!;
    if (Atomics.load(w, base) !== v || !match || expires <= this.now()) return undefined;
    return worker;
  }

  pin(session: string, workerId: number): void {
    const [hi, lo] = hash(session);
    this.write((lo & (this.capacity - 1)) * WORDS, hi, lo, workerId, this.now() + this.ttlMs);
  }

  forgetWorker(workerId: number): void {
    const w = this.words;
    for (let base = 0; base < w.length; base += WORDS) {
      if (w[base + 3] === workerId && this.expiry[(base + 4) / 2]! > 0) this.write(base, 0, 0, -1, 0, workerId);
    }
  }

  /** Write one entry unless another thread is writing it; `onlyIfWorker`: only while it still names that worker. */
  private write(base: number, hi: number, lo: number, worker: number, expires: number, onlyIfWorker?: number): void {
    const w = this.words;
    const v = Atomics.load(w, base);
    if (v & 1 || Atomics.compareExchange(w, base, v, v + 1) !== v) return;
    if (onlyIfWorker === undefined || w[base + 3] === onlyIfWorker) {
      w[base + 1] = hi;
      w[base + 2] = lo;
      w[base + 3] = worker;
      this.expiry[(base + 4) / 2] = expires;
    }
    Atomics.store(w, base, v + 2);
  }
}

/** Two 32-bit hashes of a string (FNV-1a and a multiply-xorshift), as a 64-bit key. */
function hash(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x85ebca6b);
    b ^= b >>> 13;
  }
  return [a | 0, (b ^ (b >>> 16)) | 0];
}
