// A model's workers by role, as /health and /v1/models show them: for each role it has,
// how many workers and how many healthy. A model serves disaggregated when it has prefill
// workers; it can take requests when a healthy worker can serve one whole (an aggregated
// worker, or a decode worker with a healthy prefill worker or able to compute the prompt
// itself: vLLM's, unless --disagg-enforce).

import type { ServedModel } from '../pipeline/served-model.js';
import { DisaggregatedRouter } from '../router/disaggregated-router.js';
import { WORKER_ROLES, type WorkerRole } from '../router/worker-pool.js';

export type Pools = Partial<Record<WorkerRole, { workers: number; healthy: number }>>;

export function poolsOf(m: ServedModel): Pools {
  const out: Pools = {};
  for (const w of m.pool.workers) {
    const p = (out[w.role] ??= { workers: 0, healthy: 0 });
    p.workers++;
    if (w.healthy) p.healthy++;
  }
  return out;
}

/** True when some healthy worker (or pair) can serve a request of `m`. */
export function canServe(m: ServedModel): boolean {
  const p = poolsOf(m);
  if ((p.aggregated?.healthy ?? 0) > 0) return true;
  if ((p.decode?.healthy ?? 0) === 0) return false;
  if ((p.prefill?.healthy ?? 0) > 0) return true;
  const enforce = m.router instanceof DisaggregatedRouter && m.router.enforced;
  return !enforce && m.pool.workers.some((w) => w.role === 'decode' && w.healthy && w.client.url.startsWith('vllm+'));
}

/** Roles listed in a fixed order (aggregated, prefill, decode), only those the model has. */
export function poolsJson(p: Pools): Pools {
  const out: Pools = {};
  for (const r of WORKER_ROLES) if (p[r]) out[r] = p[r];
  return out;
}
