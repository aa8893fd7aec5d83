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
  /** KServe v2 gRPC port (src/kserve); 0 picks a free port; undefined: no gRPC server. */
  grpcPort?: number;
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
  /** --chat-processor: 'portico' (or unset) for the native path, else a custom processor's name or module path. */
  chatProcessor?: string;
  /** --chat-processor-config, parsed: the provider's `config`. */
  chatProcessorConfig?: Record<string, unknown>;
  /** --chat-template FILE: a Jinja file, or a tokenizer_config-style JSON file, replacing the folder's template. */
  chatTemplate?: string;
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
  /** The KServe gRPC server's port, when one runs. */
  grpcPort?: number;
  /** Graceful stop: health turns 503, in-flight work drains (bounded), then everything closes. */
  close(): Promise<void>;
}

/** The name the model is served under: --model-name, or the model directory's name. */
export function modelName(o: ServeOptions): string {
  return o.modelName ?? basename(resolve(o.modelPath));
}
