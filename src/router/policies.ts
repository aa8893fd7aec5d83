// Load-only worker choices (no KV knowledge): round-robin, random, least-loaded,
// power-of-two choices. Each picks an index into the candidate list.

import { LoadField, type LoadTable } from './load-table.js';

export interface Candidate {
  slot: number;
}

/** Requests in flight, then held blocks: lower is less loaded. */
function loadOf(load: LoadTable, slot: number): number {
  return load.get(slot, LoadField.Requests) * 1e6 + load.get(slot, LoadField.DecodeBlocks);
}

export function pickRandom(n: number, rand: () => number): number {
  return Math.min(n - 1, Math.floor(rand() * n));
}

export function pickLeastLoaded(c: readonly Candidate[], load: LoadTable, rand: () => number): number {
  let best = 0;
  let bestLoad = loadOf(load, c[0]!.slot);
  let ties = 1;
  for (let i = 1; i < c.length; i++) {
    const l = loadOf(load, c[i]!.slot);
    if (l < bestLoad) {
      best = i;
      bestLoad = l;
      ties = 1;
    } else if (l === bestLoad && rand() * ++ties < 1) best = i;
  }
  return best;
}

export function pickPowerOfTwo(c: readonly Candidate[], load: LoadTable, rand: () => number): number {
  if (c.length === 1) return 0;
  const i = pickRandom(c.length, rand);
  let j = pickRandom(c.length - 1, rand);
  if (j >= i) j++;
  return loadOf(load, c[j]!.slot) < loadOf(load, c[i]!.slot) ? j : i;
}
