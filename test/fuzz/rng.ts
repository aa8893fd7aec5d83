// A small seeded PRNG (mulberry32) so every fuzz input is reproducible from (seed, index).

export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** The generator of input `index` of run `seed` (independent streams per input). */
  static forInput(seed: number, index: number): Rng {
    let h = (seed ^ 0x9e3779b9) >>> 0;
    h = Math.imul(h ^ (index >>> 0), 0x85ebca6b) >>> 0;
    h = Math.imul(h ^ (h >>> 13) ^ Math.floor(index / 0x100000000), 0xc2b2ae35) >>> 0;
    return new Rng((h ^ (h >>> 16)) >>> 0);
  }
  /** A float in [0, 1). */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}
