// The KV routing cost of sending a request to a worker, and the choice among
// workers by cost: the lowest, or softmax sampling with a temperature.
//
//   cost = prefill_weight × prefill blocks + decode blocks
//   prefill blocks = (worker's active prefill tokens + request's uncached tokens) / block size
//   decode blocks  = worker's active decode blocks + request's new blocks (not already cached there)
//
// Blocks a request shares with what the worker already holds are charged once, as
// an engine's KV pool holds them once: otherwise every session of a popular prefix
// would look like a full copy of it and be pushed off the worker that has it.

export interface WorkerCostInput {
  overlapBlocks: number;
  activePrefillTokens: number;
  activeDecodeBlocks: number;
}

export function kvCost(requestTokens: number, blockSize: number, prefillWeight: number, w: WorkerCostInput): number {
  const uncached = Math.max(requestTokens - w.overlapBlocks * blockSize, 0);
  const prefillBlocks = (w.activePrefillTokens + uncached) / blockSize;
  const decodeBlocks = w.activeDecodeBlocks + Math.max(Math.ceil(requestTokens / blockSize) - w.overlapBlocks, 0);
  return prefillWeight * prefillBlocks + decodeBlocks;
}

/** Index of the lowest of costs[0..n); ties broken at random. */
export function lowest(costs: Float64Array, n: number, rand: () => number = Math.random): number {
  let best = 0;
  let ties = 1;
  for (let i = 1; i < n; i++) {
    const c = costs[i]!;
    if (c < costs[best]!) {
      best = i;
      ties = 1;
    } else if (c === costs[best]! && rand() * ++ties < 1) best = i;
  }
  return best;
}

/**
 * Softmax sampling over negated costs, min-max normalised so the temperature
 * does not depend on the cost scale: p(i) ∝ exp(−(c_i − min)/(max − min)/T).
 * T = 0 is `lowest`.
 */
export function softmaxPick(costs: Float64Array, n: number, temperature: number, rand: () => number = Math.random): number {
  if (temperature <= 0 || n === 1) return lowest(costs, n, rand);
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    min = Math.min(min, costs[i]!);
    max = Math.max(max, costs[i]!);
  }
  const span = max - min || 1;
  let sum = 0;
  const w = new Float64Array(n);
  for (let i = 0; i < n; i++) sum += w[i] = Math.exp(-(costs[i]! - min) / span / temperature);
  let r = rand() * sum;
  for (let i = 0; i < n; i++) {
    r -= w[i]!;
    if (r <= 0) return i;
  }
  return n - 1;
}
