// What `portico serve` is asked to run (src/cli/main.ts reads it off the command line),
// and what a running server hands back.

import { basename, resolve } from 'node:path';
import type { RouterOptions } from '../router/options.js';
import type { Level } from '../log.js';

export interface ServeOptions {
  modelPath: string;
  modelName?: string;
  host: string;
  httpPort: number;
  workers: string[];
  mock?: 'echo' | 'sim';
  mockWorkers: number;
  maxBodyBytes?: number;
  /** Prompt tokens accepted while the context length is unknown (default DEFAULT_MAX_PROMPT_TOKENS). */
  maxPromptTokens?: number;
  maxConcurrentRequests?: number;
  apiKey?: string;
  /** Guards /admin/workers and /busy_threshold (unset: loopback clients only). */
  adminApiKey?: string;
  /** Guards /metrics (unset: public). */
  metricsApiKey?: string;
  shutdownTimeoutSecs?: number;
  metricsPrefix?: string;
  logRequests?: boolean;
  corsOrigins?: string[];
  requestTimeoutSecs?: number;
  toolCallParser?: string;
  reasoningParser?: string;
  /** Router settings (mode, KV routing, queue); defaults in src/router/options.ts. */
  router?: Partial<RouterOptions>;
  /** uWS apps on worker threads sharing the port; 1 (default here): serve on this thread. */
  shards?: number;
  /** Fault handling: first-response deadline, health polling, breaker, stream peek / keep-alive / stall limit. */
  faults?: FaultOptions;
  /** etcd://HOST:PORT[,HOST:PORT]: workers registered there join their model (src/discovery). */
  discovery?: string;
  /** Key prefix (etcd) and subject prefix (NATS) of this deployment; default 'portico'. */
  namespace?: string;
  /** Set by serve() with --discovery: the watcher's state, read by every shard (discovery/status.ts). */
  discoveryStatus?: SharedArrayBuffer;
  /** nats://HOST:PORT[,HOST:PORT]: KV events from NATS and router replica sync (src/events). */
  eventPlane?: string;
  /** With --event-plane: share load and routing decisions with the other replicas (default true). */
  replicaSync?: boolean;
  /** A replica not heard from for this long has its load dropped (default 3 s). */
  replicaSyncExpirySecs?: number;
  /** This process's replica id (set by serve(); every shard shares it). */
  replicaId?: string;
  /** Log settings, handed to shard threads (the main thread is configured by the CLI). */
  log?: { level: Level; format: 'json' | 'text' };
}

export interface FaultOptions {
  firstResponseTimeoutSecs?: number;
  healthCheckIntervalSecs?: number;
  breakerFailures?: number;
  breakerFailureRate?: number;
  precommitPeekMs?: number;
  keepAliveSecs?: number;
  stallTimeoutSecs?: number;
}

export interface Running {
  port: number;
  /** Graceful stop: health turns 503, in-flight work drains (bounded), then everything closes. */
  close(): Promise<void>;
}

/** The name the model is served under: --model-name, or the model directory's name. */
export function modelName(o: ServeOptions): string {
  return o.modelName ?? basename(resolve(o.modelPath));
}
