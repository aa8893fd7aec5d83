// `portico serve`: load the model natively, connect its workers (or start mock
// engines on loopback), and serve HTTP — on this thread (--shards 1), or on several
// worker threads sharing the port (src/shards).

import { resolve } from 'node:path';
import { Model } from '../native/core.js';
import type { RouterOptions } from '../router/options.js';
import type { Level } from '../log.js';
import { checkParserNames } from './parsers.js';
import { startFrontend, startMocks } from './frontend.js';
import { serveSharded } from '../shards/supervisor.js';
import { probePort } from '../http/port-guard.js';

export interface ServeOptions {
  modelPath: string;
  modelName?: string;
  host: string;
  httpPort: number;
  workers: string[];
  mock?: 'echo' | 'sim';
  mockWorkers: number;
  maxBodyBytes?: number;
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

export async function serve(o: ServeOptions): Promise<Running> {
  checkParserNames(o.toolCallParser, o.reasoningParser);
  if (o.workers.length === 0 && !o.mock) {
    throw new Error('no workers: pass --worker grpc://HOST:PORT (repeatable) or --mock echo|sim');
  }
  // A taken port is an error, before anything else starts (src/http/port-guard.ts).
  if (o.httpPort !== 0) await probePort(o.host, o.httpPort);
  if ((o.shards ?? 1) > 1) return serveSharded(o);
  const native = Model.load(resolve(o.modelPath));
  const mocks = await startMocks(o, native);
  let fe;
  try {
    fe = await startFrontend(o, [...o.workers, ...mocks.urls], native);
  } catch (err) {
    await mocks.close();
    throw err;
  }
  return {
    port: fe.port,
    async close() {
      await fe.close();
      await mocks.close();
    },
  };
}

