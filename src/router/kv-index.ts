// The prefix index: which workers hold which KV blocks. Block keys are chained
// hashes (hash.ts), so each key already stands for its whole prefix and the radix
// tree over block sequences flattens into one map from key to the worker slots
// holding that node. A slot may appear more than once for one key (the same block
// known from two sources: a rank's event and a predicted insert); each occurrence
// is one reference, dropped by one remove.

export class KvIndex {
  private readonly holders = new Map<number, number[]>();

  /** Blocks indexed (distinct keys). */
  get size(): number {
    return this.holders.size;
  }

  add(key: number, slot: number): void {
    const h = this.holders.get(key);
    if (h) h.push(slot);
    else this.holders.set(key, [slot]);
  }

  /** Drop one reference of `slot` to `key`; false when it held none. */
  remove(key: number, slot: number): boolean {
    const h = this.holders.get(key);
    if (!h) return false;
    const i = h.indexOf(slot);
    if (i < 0) return false;
    if (h.length === 1) this.holders.delete(key);
    else {
      h[i] = h[h.length - 1]!;
      h.pop();
    }
    return true;
  }

  holds(key: number, slot: number): boolean {
    return this.holders.get(key)?.includes(slot) ?? false;
  }

  /**
   * Overlap per slot: how many leading blocks of `keys` each slot holds, written
   * into `overlap` (zeroed first). Stops at the first block no candidate still
   * matching holds. Returns the deepest overlap.
   */
  match(keys: Float64Array, overlap: Uint32Array): number {
    overlap.fill(0);
    if (keys.length === 0) return 0;
    const first = this.holders.get(keys[0]!);
    if (!first) return 0;
    for (const s of first) overlap[s] = 1;
    let depth = 1;
    for (let i = 1; i < keys.length; i++) {
      const h = this.holders.get(keys[i]!);
      if (!h) break;
      let advanced = 0;
      for (let j = 0; j < h.length; j++) {
        const s = h[j]!;
        if (overlap[s] === i) {
          overlap[s] = i + 1;
          advanced++;
        }
      }
      if (advanced === 0) break;
      depth = i + 1;
    }
    return depth;
  }
}
