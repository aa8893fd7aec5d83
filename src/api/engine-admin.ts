// Engine admin forwarded to every worker of every model (SGLang's names):
//   POST /reset_prefix_cache   the FlushCache rpc
//   POST /start_profile        the StartProfile rpc
//   POST /stop_profile         the StopProfile rpc
// Both engine protocols define the three rpcs. 200 when every worker succeeded, else 502
// with each worker's answer. 501 when the rpc is not there at all: an engine client without
// it, or every worker's engine answering UNIMPLEMENTED (an engine build without it).

import { ApiError } from '../protocol/errors.js';
import { EngineError } from '../engine/errors.js';
import type { EngineAdminResult, EngineClient } from '../engine/types.js';
import type { AppContext } from './context.js';
import type { Exchange } from './exchange.js';

type Op = 'flushCache' | 'startProfile' | 'stopProfile';

const RPC: Record<Op, string> = { flushCache: 'FlushCache', startProfile: 'StartProfile', stopProfile: 'StopProfile' };

function notImplemented(op: Op, why: string): ApiError {
  return new ApiError(501, `the ${RPC[op]} rpc is not available: ${why}`, { type: 'invalid_request_error', code: 'not_implemented' });
}

export function forwardToWorkers(ctx: AppContext, op: Op) {
  return async (ex: Exchange): Promise<void> => {
    const workers = [...ctx.models.values()].flatMap((m) => m.pool.workers.map((w) => ({ model: m.name, id: w.id, client: w.client as EngineClient })));
    if (workers.some((w) => typeof w.client[op] !== 'function')) throw notImplemented(op, 'the engine protocol of this deployment has no such rpc');
    let unimplemented = 0;
    const results = await Promise.all(
      workers.map(async (w) => {
        let r: EngineAdminResult;
        try {
          r = await w.client[op]!();
        } catch (e) {
          if (e instanceof EngineError && e.code === 'unimplemented') unimplemented++;
          r = { success: false, message: e instanceof Error ? e.message : String(e) };
        }
        return { model: w.model, worker: w.id, ...r };
      }),
    );
    if (workers.length > 0 && unimplemented === workers.length) throw notImplemented(op, 'no worker\'s engine implements it (gRPC UNIMPLEMENTED)');
    const success = results.length > 0 && results.every((r) => r.success);
    ex.sendJson(success ? 200 : 502, JSON.stringify({ success, workers: results }));
  };
}
