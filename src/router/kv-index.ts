// The prefix index: which workers hold which KV blocks. Block keys are chained
// hashes (hash.ts), so each key already stands for its whole prefix and the radix
// tree over block sequences flattens into one table from key to the holders of that
// node: (worker slot, data-parallel rank) pairs numbered by holders.ts. A holder may
// appear more than once for one key (the same block known from two sources: a
// rank's event and a predicted insert); each occurrence is one reference, dropped
// by one remove.
//
// The table is open addressing with linear probing over typed arrays (the key's
// low 32 bits pick the bucket; they are already mixed), deletion by backward
// shift, so a lookup is one or two cache lines — several times faster than a Map
// with 53-bit number keys at a million entries.

const TWO32 = 4294967296;
const OCCUPIED = 1 << 22;

export class KvIndex {
  private mask: number;
  /** Per bucket: [low 32 bits of the key, high 21 bits | OCCUPIED (0 = empty), first holder slot, unused]. */
  private tab: Int32Array;
  /** Holders beyond the first, per bucket (most blocks have one). */
  private more: (number[] | undefined)[];
  private count = 0;
  /** Highest holder id ever added: match() zeroes overlap only up to it. */
  private maxHolder = 0;

  constructor(initialCapacity = 1 << 12) {
    let cap = 16;
    while (cap < initialCapacity * 2) cap *= 2;
    this.mask = cap - 1;
    this.tab = new Int32Array(cap * 4);
    this.more = new Array(cap);
  }

  /** Blocks indexed (distinct keys). */
  get size(): number {
    return this.count;
  }

  private find(key: number): number {
    const lo = key | 0;
    const hi = Math.floor(key / TWO32) | OCCUPIED;
    const m = this.mask;
    const t = this.tab;
    for (let i = lo & m; ; i = (i + 1) & m) {
      const h = t[i * 4 + 1]!;
      if (h === 0) return -1;
      if (h === hi && t[i * 4] === lo) return i;
    }
  }

  add(key: number, slot: number): void {
    const lo = key | 0;
    const hi = Math.floor(key / TWO32) | OCCUPIED;
    const m = this.mask;
    const t = this.tab;
    let i = lo & m;
    for (; ; i = (i + 1) & m) {
      const h = t[i * 4 + 1]!;
      if (h === 0) break;
      if (h === hi && t[i * 4] === lo) {
        if (slot > this.maxHolder) this.maxHolder = slot;
        const x = this.more[i];
        if (x) x.push(slot);
        else this.more[i] = [slot];
        return;
      }
    }
    if (slot > this.maxHolder) this.maxHolder = slot;
    t[i * 4] = lo;
    t[i * 4 + 1] = hi;
    t[i * 4 + 2] = slot;
    if (++this.count * 2 > m + 1) this.grow();
  }

  /** Drop one reference of `slot` to `key`; false when it held none. */
  remove(key: number, slot: number): boolean {
    const i = this.find(key);
    if (i < 0) return false;
    const x = this.more[i];
    if (this.tab[i * 4 + 2] === slot) {
      if (!x) {
        this.deleteAt(i);
        return true;
      }
      this.tab[i * 4 + 2] = x.pop()!;
    } else {
      const at = x ? x.indexOf(slot) : -1;
      if (at < 0) return false;
      x![at] = x![x!.length - 1]!;
      x!.pop();
    }
    if (x && x.length === 0) this.more[i] = undefined;
    return true;
  }

  holds(key: number, slot: number): boolean {
    const i = this.find(key);
    return i >= 0 && (this.tab[i * 4 + 2] === slot || (this.more[i]?.includes(slot) ?? false));
  }

  /**
   * Overlap per holder: how many leading blocks of `keys` each holder holds, written
   * into `overlap` (zeroed first, up to the highest holder ever added). Stops at the first block no candidate still
   * matching holds. Returns the deepest overlap.
   */
  match(keys: Float64Array, overlap: Uint32Array): number {
    overlap.fill(0, 0, Math.min(overlap.length, this.maxHolder + 1));
    let depth = 0;
    const t = this.tab;
    for (let i = 0; i < keys.length; i++) {
      const b = this.find(keys[i]!);
      if (b < 0) break;
      let advanced = 0;
      const s0 = t[b * 4 + 2]!;
      if (overlap[s0] === i) {
        overlap[s0] = i + 1;
        advanced++;
      }
      const x = this.more[b];
      if (x) {
        for (let j = 0; j < x.length; j++) {
          const s = x[j]!;
          if (overlap[s] === i) {
            overlap[s] = i + 1;
            advanced++;
          }
        }
      }
      if (advanced === 0) break;
      depth = i + 1;
    }
    return depth;
  }

  /** Backward-shift deletion: later entries of the probe run move up into the hole. */
  private deleteAt(i: number): void {
    const m = this.mask;
    const t = this.tab;
    this.count--;
    let hole = i;
    for (let j = (i + 1) & m; t[j * 4 + 1] !== 0; j = (j + 1) & m) {
      const home = t[j * 4]! & m;
      // Leave j where it is when its home lies cyclically in (hole, j].
      const stays = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (stays) continue;
      t[hole * 4] = t[j * 4]!;
      t[hole * 4 + 1] = t[j * 4 + 1]!;
      t[hole * 4 + 2] = t[j * 4 + 2]!;
      this.more[hole] = this.more[j];
      hole = j;
    }
    t[hole * 4] = 0;
    t[hole * 4 + 1] = 0;
    t[hole * 4 + 2] = 0;
    this.more[hole] = undefined;
  }

  private grow(): void {
    const old = this.tab;
    const oldMore = this.more;
    const cap = (this.mask + 1) * 2;
    this.mask = cap - 1;
    this.tab = new Int32Array(cap * 4);
    this.more = new Array(cap);
    const m = this.mask;
    const t = this.tab;
    for (let k = 0; k < old.length / 4; k++) {
      if (old[k * 4 + 1] === 0) continue;
      let i = old[k * 4]! & m;
      while (t[i * 4 + 1] !== 0) i = (i + 1) & m;
      t[i * 4] = old[k * 4]!;
      t[i * 4 + 1] = old[k * 4 + 1]!;
      t[i * 4 + 2] = old[k * 4 + 2]!;
      this.more[i] = oldMore[k];
    }
  }
}
