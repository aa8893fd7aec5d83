// What `portico serve` is asked to run (src/cli/main.ts reads it off the command line),
// and what a running server hands back.

import type { ImageSettings } from '../pipeline/image-store.js';
import type { LimitsConfig } from '../limits/limits-config.js';
import type { RateLimitShare } from './rate-limits.js';
import type { TracingSettings } from '../tracing/settings.js';
import { basename, resolve } from 'node:path';
import type { RouterOptions } from '../router/options.js';
import type { Level } from '../log.js';

/** One served model: its folder, its name, the workers assigned to it by name, its own parsers and limits. */
export interface ModelSpec {
  name: string;
  /** Hugging Face layout folder (tokenizer, template, config.json, generation_config.json). */
  path: string;
  /** Worker URLs assigned to this model (--worker NAME=URL, a config `worker` list, or by GetModelInfo). */
  workers: string[];
  /** Its prefill workers (--prefill-worker, config `prefill-worker`): disaggregated serving. */
  prefillWorkers?: string[];
  /** Its decode workers (--decode-worker, config `decode-worker`). */
  decodeWorkers?: string[];
  /** Per-model output parsers (the config form); unset: the top-level --tool-call-parser / --reasoning-parser. */
  toolCallParser?: string;
  reasoningParser?: string;
  /** Per-model --max-prompt-tokens; unset: the top-level one. */
  maxPromptTokens?: number;
  /** Per-model chat template file (the config form's `chat-template`); unset: --chat-template. */
  chatTemplate?: string;
}

/** A LoRA adapter served as model `name` on the workers of model `base` (--lora NAME=PATH@BASE). */
export interface LoraSpec {
  name: string;
  /** The adapter folder as the workers read it. */
  path: string;
  base: string;
}

export interface ServeOptions {
  /** The served models, in serving order (at least one). */
  models: ModelSpec[];
  host: string;
  httpPort: number;
  /** KServe v2 gRPC port (src/kserve); 0 picks a free port; undefined: no gRPC server. */
  grpcPort?: number;
  /** Bare worker URLs not yet assigned to a model (serve() assigns them by GetModelInfo). */
  workers: string[];
  /** Bare prefill and decode worker URLs, assigned the same way. */
  prefillWorkers?: string[];
  decodeWorkers?: string[];
  /** Request migration (default DEFAULT_MIGRATION). */
  migration?: { limit: number; maxSeqLen: number };
  /** Disaggregated serving (models with prefill workers). */
  disagg?: { enforce: boolean; bootstrapPort: number; rendezvousTimeoutSecs: number };
  /** LoRA adapters loaded at startup. */
  loras?: LoraSpec[];
  mock?: 'echo' | 'sim';
  mockWorkers: number;
  maxBodyBytes?: number;
  /** Prompt tokens accepted while the context length is unknown (default DEFAULT_MAX_PROMPT_TOKENS). */
  maxPromptTokens?: number;
  maxConcurrentRequests?: number;
  /** The accepted API keys (each a tenant of the Responses store). */
  apiKey?: string | readonly string[];
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
  /** --chat-processor: 'portico' (or unset) for the native path, else a custom processor's name or module path. */
  chatProcessor?: string;
  /** --chat-processor-config, parsed: the provider's second argument, `options` ({} when unset). */
  chatProcessorConfig?: Record<string, unknown>;
  /** The provider's first argument, `config`: the resolved serve options by flag name, secrets left out (src/cli/frontend-config.ts). */
  frontendConfig?: Record<string, unknown>;
  /** --chat-template FILE: a Jinja file, or a tokenizer_config-style JSON file, replacing every model's folder template (unless the model has its own). */
  chatTemplate?: string;
  /** The Responses store (default: sqlite:portico-responses.db, 30-day TTL). */
  responsesStore?: { url: string; ttlSecs: number; maxRows: number };
  /** Per-key rate limits as loaded from `rate-limits` (none: no limits until a reload adds some). */
  rateLimits?: LimitsConfig;
  /** Set by serve(): the process's budget buffer and slot table, applied by every frontend thread. */
  rateLimitShare?: RateLimitShare;
  /** Log settings, handed to shard threads (the main thread is configured by the CLI). */
  log?: { level: Level; format: 'json' | 'text' };
  /** Distributed tracing (--otlp-traces-endpoint and the OTEL_* variables); absent or null: off. */
  tracing?: TracingSettings | null;
  /** Image input: fetching, limits and the processed-image cache (default DEFAULT_IMAGE_SETTINGS). */
  images?: ImageSettings;
}

export interface FaultOptions {
  firstResponseTimeoutSecs?: number;
  healthCheckIntervalSecs?: number;
  breakerFailures?: number;
  breakerFailureRate?: number;
  precommitPeekMs?: number;
  keepAliveSecs?: number;
  stallTimeoutSecs?: number;
  /** --stream-write-interval-ms (api/sse.ts StreamSettings.writeIntervalMs). */
  writeIntervalMs?: number;
}

export interface Running {
  port: number;
  /** The KServe gRPC server's port, when one runs. */
  grpcPort?: number;
  /** Apply new per-key rate limits (SIGHUP re-reads them); throws, keeping the old ones, when they cannot be applied. */
  reloadRateLimits?(config: LimitsConfig): Promise<void>;
  /** Graceful stop: health turns 503, in-flight work drains (bounded), then everything closes. */
  close(): Promise<void>;
}

/** The name a model folder is served under when none is given: the folder's name. */
export function defaultModelName(path: string): string {
  return basename(resolve(path));
}
