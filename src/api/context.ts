// What every endpoint handler can reach: the served models and the frontend options.

import { ApiError } from '../protocol/errors.js';
import type { ServedModel } from '../pipeline/served-model.js';
import type { FrontendMetrics } from '../metrics/frontend.js';
import type { FamilySnapshot } from '../metrics/snapshot.js';
import type { ControlPlane } from './control-change.js';
import type { DiscoveryStatus } from '../discovery/status.js';

export interface Lifecycle {
  /** Set on SIGTERM/SIGINT: health answers 503 shutting_down while in-flight work drains. */
  draining: boolean;
}

export interface AppContext {
  readonly models: ReadonlyMap<string, ServedModel>;
  readonly ignoreUnsupportedFields: boolean;
  readonly lifecycle: Lifecycle;
  readonly metrics: FrontendMetrics;
  /** Where worker and threshold changes go (default: applied here; with shards: to every shard). */
  readonly control?: ControlPlane;
  /** Set when this is one of several server shards (--shards above 1). */
  readonly shards?: ShardLink;
  /** With --discovery: the etcd watcher's state (shared by every shard). */
  readonly discovery?: DiscoveryStatus;
  /** With --event-plane: the NATS connection's state. */
  readonly eventPlane?: { readonly connected: boolean; readonly reconnects: number; readonly replicaSync: boolean };
}

/** What a shard's endpoints need from the other shards. */
export interface ShardLink {
  /** This shard's index, 0-based. */
  readonly id: number;
  /** Every shard's metric values (this one's included), for /metrics. */
  collectMetrics(): Promise<FamilySnapshot[][]>;
}

export function modelFor(ctx: AppContext, name: string): ServedModel {
  const m = ctx.models.get(name);
  if (m) return m;
  throw new ApiError(404, `The model \`${name}\` does not exist.`, { type: 'invalid_request_error', param: 'model', code: 'model_not_found' });
}
