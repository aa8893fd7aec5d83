// One embedding through the router: the router picks the worker as for a generation
// (same overrides, session, salt, policy and queue), the request counts in the
// worker's load as prefill tokens until the engine answers, and leaves no predicted
// KV blocks behind (pooling keeps no cache a later request could reuse).

import type { RouteHints } from '../router/types.js';
import type { EmbedResult } from '../engine/types.js';
import { engineFailure } from './generate.js';
import { EngineError } from '../engine/errors.js';
import { ApiError } from '../protocol/errors.js';
import type { ServedModel } from './served-model.js';

export async function embed(model: ServedModel, ids: Uint32Array, requestId: string, signal: AbortSignal, route: RouteHints): Promise<EmbedResult> {
  model.stats.inputTokens.observe(ids.length);
  const routed = model.router.route({ tokens: ids, hints: route, signal, ephemeral: true });
  const d = routed instanceof Promise ? await routed : routed;
  const worker = d.worker;
  worker.inflight++;
  try {
    return await worker.client.embed({ requestId, inputIds: ids, dataParallelRank: d.dpRank ?? route.dpRank }, signal);
  } catch (err) {
    if (err instanceof EngineError && err.code === 'unimplemented') {
      throw new ApiError(501, `worker ${worker.client.url} does not serve embeddings: ${err.message}`, { type: 'internal_error', code: 'embeddings_unsupported' });
    }
    // The worker judged the input itself (too long for its context, bad ids): the client's fault.
    if (err instanceof EngineError && err.code === 'invalid_argument') {
      throw ApiError.badRequest(`the engine rejected the input: ${err.message}`, 'input');
    }
    throw engineFailure(model, worker, err);
  } finally {
    worker.inflight--;
    d.done();
  }
}
