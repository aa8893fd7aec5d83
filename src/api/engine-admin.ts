// Engine admin forwarded to every worker of every model (SGLang's names):
//   POST /reset_prefix_cache   the FlushCache rpc
//   POST /start_profile        the StartProfile rpc
//   POST /stop_profile         the StopProfile rpc
// Both engine protocols carry the three rpcs. 200 when every worker succeeded, else 502
// with each worker's answer; an engine client without the rpc answers 501.

import { ApiError } from '../protocol/errors.js';
import type { EngineAdminResult, EngineClient } from '../engine/types.js';
import type { AppContext } from './context.js';
import type { Exchange } from './exchange.js';

type Op = 'flushCache' | 'startProfile' | 'stopProfile';

export function forwardToWorkers(ctx: AppContext, op: Op) {
  return async (ex: Exchange): Promise<void> => {
    const workers = [...ctx.models.values()].flatMap((m) => m.pool.workers.map((w) => ({ model: m.name, id: w.id, client: w.client as EngineClient })));
    if (workers.some((w) => typeof w.client[op] !== 'function')) throw new ApiError(501, `the engine protocol of this deployment has no ${op} rpc`, { type: 'invalid_request_error', code: 'not_implemented' });
    const results = await Promise.all(
      workers.map(async (w) => {
        let r: EngineAdminResult;
        try {
          r = await w.client[op]!();
        } catch (e) {
          r = { success: false, message: e instanceof Error ? e.message : String(e) };
        }
        return { model: w.model, worker: w.id, ...r };
      }),
    );
    const success = results.length > 0 && results.every((r) => r.success);
    ex.sendJson(success ? 200 : 502, JSON.stringify({ success, workers: results }));
  };
}
