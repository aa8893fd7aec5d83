// GET /health: ready to serve (503 until some model can serve a request: a healthy worker,
// or for a disaggregated model a healthy decode worker with its prefill side; and 503
// shutting_down while the server drains).
// GET /live: the process is up and its event loop answers.

import { baseModels, type AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { kvRoutingDetail } from './kv-routing-detail.js';
import { canServe, poolsJson, poolsOf } from './pools.js';

export function health(ctx: AppContext) {
  return (ex: Exchange): void => {
    // With several shards, say which one answered (each drains on its own).
    const shard = ctx.shards ? { shard: ctx.shards.id } : {};
    if (ctx.lifecycle.draining) {
      ex.sendJson(503, JSON.stringify({ status: 'shutting_down', ...shard }));
      return;
    }
    let ready = false;
    const models = baseModels(ctx).map((m) => {
      const kv = kvRoutingDetail(m);
      ready ||= canServe(m);
      const pools = poolsOf(m);
      return {
        model: m.name,
        workers: m.pool.workers.length,
        healthy_workers: m.pool.workers.filter((w) => w.healthy).length,
        ...(pools.prefill || pools.decode ? { serving: 'disaggregated', pools: poolsJson(pools) } : {}),
        ...(m.adapters.size > 0 ? { adapters: [...m.adapters.keys()] } : {}),
        ...(kv ? { kv_routing: kv } : {}),
      };
    });
    // etcd lost: the last known workers keep serving; say so (not a reason to stop serving).
    const discovery = ctx.discovery ? { discovery: ctx.discovery.view() } : {};
    const p = ctx.eventPlane;
    const limits = p?.rateLimitSync;
    const plane = p ? { event_plane: { connected: p.connected, reconnects: p.reconnects, replica_sync: p.replicaSync, ...(limits ? { rate_limit_sync: limits } : {}) } } : {};
    ex.sendJson(ready ? 200 : 503, JSON.stringify({ status: ready ? 'healthy' : 'unhealthy', ...shard, models, ...discovery, ...plane }));
  };
}

export function live(ex: Exchange): void {
  ex.sendJson(200, '{"status":"live"}');
}
