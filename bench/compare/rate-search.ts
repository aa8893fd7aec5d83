// "Requests/s at p99 < 10 ms": the highest open-loop (Poisson) rate of 1-token requests a
// frontend serves with its end-to-end p99 under a bound, found by probing: double the rate
// while it passes, halve while it fails, then bisect between the highest pass and the lowest
// failure. Each probe is one bounded `portico bench --rate R` run; the search makes at most
// `maxProbes` of them, so its time is bounded by maxProbes × (one probe's requests / rate + a
// drain). A probe passes when no request failed, p99 < the bound and the rate was delivered
// (achieved req/s ≥ `minDelivered` × offered): an open-loop run that could not send at the
// offered rate, or whose answers queued, did not serve that rate. 0.8, not 1: a probe's
// Poisson arrivals (150 or more) realise the nominal rate only to within ~8% (1/√N), and
// req/s counts to the last answer's end.

import type { BenchFigures } from './bench-summary.js';

export interface SearchOptions {
  /** First rate tried, req/s. */
  start: number;
  /** Never offer more than this, req/s. */
  max: number;
  /** Give up below this rate (the answer is then "< min"), req/s. */
  min: number;
  maxProbes: number;
  /** The p99 bound, ms. */
  p99Ms: number;
  /** Stop bisecting once (lowest failure − highest pass) / highest pass is below this. */
  resolution: number;
  /** Achieved / offered rate a passing probe needs. */
  minDelivered: number;
}

export const DEFAULT_SEARCH: SearchOptions = { start: 100, max: 6400, min: 20, maxProbes: 8, p99Ms: 10, resolution: 0.1, minDelivered: 0.8 };

export interface Probe {
  rate: number;
  figures: BenchFigures;
  pass: boolean;
  /** Why it failed, for the log. */
  why?: string;
}

export interface SearchResult {
  /** The highest passing probe, or null when even `min` (or the lowest rate tried) failed. */
  best: Probe | null;
  /** The lowest failing probe above it, or null when `max` passed. */
  ceiling: Probe | null;
  probes: Probe[];
}

export function judge(rate: number, f: BenchFigures, o: SearchOptions): Probe {
  const why = f.failed > 0 ? `${f.failed} failed` : f.e2eP99 >= o.p99Ms ? `p99 ${f.e2eP99.toFixed(2)} ms` : f.requestsPerS < o.minDelivered * rate ? `delivered ${f.requestsPerS.toFixed(1)} of ${rate} req/s` : undefined;
  return { rate, figures: f, pass: why === undefined, ...(why ? { why } : {}) };
}

export async function searchRate(run: (rate: number) => Promise<BenchFigures>, o: SearchOptions = DEFAULT_SEARCH): Promise<SearchResult> {
  const probes: Probe[] = [];
  let best: Probe | null = null;
  let ceiling: Probe | null = null;
  let rate = o.start;
  while (probes.length < o.maxProbes) {
    const p = judge(rate, await run(rate), o);
    probes.push(p);
    if (p.pass) best = p;
    else ceiling = p;
    if (best && ceiling && (ceiling.rate - best.rate) / best.rate < o.resolution) break;
    if (p.pass && !ceiling && rate >= o.max) break;
    if (!p.pass && !best && rate <= o.min) break;
    const next = best && ceiling ? (best.rate + ceiling.rate) / 2 : p.pass ? Math.min(rate * 2, o.max) : Math.max(rate / 2, o.min);
    rate = Math.round(next);
    if (probes.some((q) => q.rate === rate)) break; // rounding left nothing new to try
  }
  return { best, ceiling, probes };
}
