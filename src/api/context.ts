// What every endpoint handler can reach: the served models and the frontend options.

import { ApiError } from '../protocol/errors.js';
import type { ServedModel } from '../pipeline/served-model.js';
import type { FrontendMetrics } from '../metrics/frontend.js';
import type { FamilySnapshot } from '../metrics/snapshot.js';
import type { ControlPlane } from './control-change.js';
import type { DiscoveryStatus } from '../discovery/status.js';
import type { ProcessorSlot } from '../processors/lifecycle.js';
import type { ResponseStore } from '../store/types.js';
import type { RateLimits } from '../limits/key-limits.js';
import type { RequestTracer } from '../tracing/tracer.js';

export interface Lifecycle {
  /** Set on SIGTERM/SIGINT: health answers 503 shutting_down while in-flight work drains. */
  draining: boolean;
}

export interface AppContext {
  /** Served models by name: the base models in serving order, then LoRA adapters (added and removed at run time). */
  readonly models: Map<string, ServedModel>;
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
  readonly eventPlane?: {
    readonly connected: boolean;
    readonly reconnects: number;
    readonly replicaSync: boolean;
    /** Per-key rate-limit sync (on the thread that runs it: shard 0), once limits are attached. */
    readonly rateLimitSync?: { readonly peers: number; readonly requests_applied: number; readonly tokens_applied: number };
  };
  /** Models served by a custom chat processor (--chat-processor), by name. */
  readonly chatProcessors?: ReadonlyMap<string, ProcessorSlot>;
  /** The Responses store (--responses-store); absent or null: nothing is stored. */
  readonly responseStore?: ResponseStore | null;
  /** --api-key is set: each key is a tenant of the store (else one tenant, ''). */
  readonly tenantPerKey?: boolean;
  /** Per-key rate limits (every shard's view of the same budgets); inactive when none are configured. */
  readonly rateLimits?: RateLimits;
  /** Traces requests (--otlp-traces-endpoint); absent or null: tracing is off. The KServe face starts its traces with it. */
  readonly tracer?: RequestTracer | null;
}

/** The processor serving `model`'s chat, Responses and Anthropic requests, if one does. */
export function chatProcessorOf(ctx: AppContext, model: ServedModel): ProcessorSlot | undefined {
  return ctx.chatProcessors?.get(model.name);
}

/** What a shard's endpoints need from the other shards. */
export interface ShardLink {
  /** This shard's index, 0-based. */
  readonly id: number;
  /** Every shard's metric values (this one's included), for /metrics. */
  collectMetrics(): Promise<FamilySnapshot[][]>;
}

/** The base models (not LoRA adapters, which share their base's workers), in serving order. */
export function baseModels(ctx: AppContext): ServedModel[] {
  return [...ctx.models.values()].filter((m) => !m.adapter);
}

export function modelFor(ctx: AppContext, name: string): ServedModel {
  const m = ctx.models.get(name);
  if (m) return m;
  throw new ApiError(404, `The model \`${name}\` does not exist.`, { type: 'invalid_request_error', param: 'model', code: 'model_not_found' });
}
