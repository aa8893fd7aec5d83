// A seeded linear congruential generator for benches: the same workload on every run.

/** Uniform numbers in [0, 1) from `seed`. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
}
