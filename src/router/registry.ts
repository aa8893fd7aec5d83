// Which router serves a worker pool. `portico serve` attaches one per model; a
// pool without one (tests, embedders) gets a round-robin router on first use.

import { ModelRouter } from './router.js';
import type { Router } from './types.js';
import type { WorkerPool } from './worker-pool.js';

const routers = new WeakMap<WorkerPool, Router>();

export function attachRouter(pool: WorkerPool, router: Router): void {
  routers.get(pool)?.close();
  routers.set(pool, router);
}

export function routerFor(pool: WorkerPool): Router {
  let r = routers.get(pool);
  if (!r) routers.set(pool, (r = new ModelRouter(pool)));
  return r;
}
