// --event-plane for one frontend (one shard): its NATS connection, the KV event source
// of every served model's workers (NATS instead of each worker's gRPC stream), and, per
// model, replica sync with the other frontends serving it.

import { comparableWorkerUrl } from '../api/worker-url.js';
import { connectEventPlane, type EventPlane } from '../events/connection.js';
import { NatsKvEventSource } from '../events/nats-kv-source.js';
import { ReplicaSync } from '../events/replica-sync.js';
import { LimitSync } from '../events/limit-sync.js';
import type { RateLimits } from '../limits/key-limits.js';
import { natsServers } from '../events/servers.js';
import { log } from '../log.js';
import type { ModelRouter } from '../router/router.js';
import type { KvSourceFactory } from '../router/worker-slots.js';
import type { ServeOptions } from './options.js';

export interface FrontendEventPlane {
  /** The KV event source of model `model`'s workers (its router's kvSource). */
  kvSource(model: string): KvSourceFactory;
  status: { readonly connected: boolean; readonly reconnects: number; readonly replicaSync: boolean; readonly rateLimitSync?: { peers: number; requests_applied: number; tokens_applied: number } };
  /** Replica sync of model `model`, once attached. */
  sync(model: string): ReplicaSync | undefined;
  /** Share model `model`'s load and routing decisions with the other replicas (kv mode). */
  attach(model: string, router: ModelRouter): void;
  /** Share the process's per-key rate-limit spending with the other replicas (shard 0 only). */
  attachLimits(limits: RateLimits): void;
  /** Rate-limit sync, once attached. */
  readonly limitSync: LimitSync | null;
  detach(): void;
  close(): Promise<void>;
}

/** Canonical worker URLs, remembered (every replica-sync message names workers). */
function canonCache(): (url: string) => string {
  const memo = new Map<string, string>();
  return (url) => {
    let c = memo.get(url);
    if (c === undefined) {
      if (memo.size > 4096) memo.clear();
      memo.set(url, (c = comparableWorkerUrl(url)));
    }
    return c;
  };
}

/** One NATS connection per frontend (shard), shared by every served model's KV sources and replica sync. */
export async function startEventPlane(o: ServeOptions, shard: number): Promise<FrontendEventPlane | null> {
  if (!o.eventPlane) return null;
  const replica = o.replicaId ?? 'replica';
  const plane: EventPlane = await connectEventPlane(natsServers(o.eventPlane), `portico-frontend-${replica}-${shard}`);
  const namespace = o.namespace ?? 'portico';
  const canon = canonCache();
  const withSync = o.replicaSync !== false;
  const syncs = new Map<string, ReplicaSync>();
  let limitSync: LimitSync | null = null;
  return {
    kvSource: (model) => (s) => new NatsKvEventSource({ nc: plane.nc, namespace, model, url: canon(s.url), sink: s.sink, onError: s.onError }),
    status: {
      get connected() {
        return plane.connected;
      },
      get reconnects() {
        return plane.reconnects;
      },
      replicaSync: withSync,
      get rateLimitSync() {
        return limitSync?.view();
      },
    },
    sync: (model) => syncs.get(model),
    attach(model, router) {
      if (!withSync || syncs.has(model)) return;
      const sync = new ReplicaSync({ nc: plane.nc, namespace, model, replica, router, publishLoad: shard === 0, canon, expiryMs: (o.replicaSyncExpirySecs ?? 3) * 1000 });
      syncs.set(model, sync);
      sync.start();
      log.info('replica sync on', { replica, model });
    },
    attachLimits(limits) {
      // One thread per process: the budgets are the process's (its shards share them).
      if (!withSync || shard !== 0 || limitSync) return;
      limitSync = new LimitSync({ nc: plane.nc, namespace, replica, limits, expiryMs: (o.replicaSyncExpirySecs ?? 3) * 1000 });
      limitSync.start();
    },
    get limitSync() {
      return limitSync;
    },
    detach() {
      for (const s of syncs.values()) s.close();
      syncs.clear();
      limitSync?.close();
      limitSync = null;
    },
    close: () => plane.close(),
  };
}
