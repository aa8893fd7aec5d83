// One embedding through the router: the router picks the worker as for a generation
// (same overrides, session, salt, policy and queue), the request counts in the
// worker's load as prefill tokens until the engine answers, and leaves no predicted
// KV blocks behind (pooling keeps no cache a later request could reuse). Engine
// failures are mapped as for a generation (workerFailure: engine-errors.ts; a worker
// without the Embed rpc is a 501 embeddings_unsupported).

import type { RouteHints } from '../router/types.js';
import type { EmbedResult } from '../engine/types.js';
import { workerFailure } from './worker-turn.js';
import type { ServedModel } from './served-model.js';

export async function embed(model: ServedModel, ids: Uint32Array, requestId: string, signal: AbortSignal, route: RouteHints): Promise<EmbedResult> {
  model.stats.inputTokens.observe(ids.length);
  const routed = model.router.route({ tokens: ids, hints: route, signal, ephemeral: true });
  const d = routed instanceof Promise ? await routed : routed;
  const worker = d.worker;
  worker.inflight++;
  try {
    const r = await worker.client.embed({ requestId, inputIds: ids, dataParallelRank: d.dpRank ?? route.dpRank }, signal);
    model.pool.reportSuccess(worker);
    return r;
  } catch (err) {
    throw workerFailure(model, worker, err, 'embed');
  } finally {
    worker.inflight--;
    d.done();
  }
}
