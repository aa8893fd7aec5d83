// A served model's routers as the admin, health and metrics views read them: the main
// router (aggregated and decode workers) and, for the prefill pool, the prefill router.

import { DisaggregatedRouter } from '../router/disaggregated-router.js';
import { ModelRouter } from '../router/router.js';
import type { Worker } from '../router/worker-pool.js';
import type { ServedModel } from '../pipeline/served-model.js';

/** The model's routers: main first, then prefill (when it has one). */
export function routersOf(m: ServedModel): ModelRouter[] {
  const r = m.router;
  if (r instanceof DisaggregatedRouter) return [r.main, r.prefill];
  return r instanceof ModelRouter ? [r] : [];
}

/** The router that chooses among `w`'s role's workers. */
export function routerOfWorker(m: ServedModel, w: Worker): ModelRouter | null {
  const r = m.router;
  if (r instanceof DisaggregatedRouter) return w.role === 'prefill' ? r.prefill : r.main;
  return r instanceof ModelRouter ? r : null;
}
