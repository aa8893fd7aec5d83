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
  /** Log settings, handed to shard threads (the main thread is configured by the CLI). */
  log?: { level: Level; format: 'json' | 'text' };
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
  if ((o.shards ?? 1) > 1) return serveSharded(o);
  const native = Model.load(resolve(o.modelPath));
  const mocks = await startMocks(o, native);
  const fe = await startFrontend(o, [...o.workers, ...mocks.urls], native);
  return {
    port: fe.port,
    async close() {
      await fe.close();
      await mocks.close();
    },
  };
}

