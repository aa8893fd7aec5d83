// `portico serve`: load the model natively, connect its workers (or start mock
// engines on loopback), and serve HTTP.

import { basename, resolve } from 'node:path';
import { Model } from '../native/core.js';
import { createEngineClient } from '../engine/factory.js';
import type { EngineClient } from '../engine/types.js';
import { startMockEngine } from '../mock/engine-server.js';
import { WorkerPool } from '../router/worker-pool.js';
import { ModelRouter } from '../router/router.js';
import { attachRouter } from '../router/registry.js';
import type { RouterOptions } from '../router/options.js';
import { ServedModel } from '../pipeline/served-model.js';
import { ignoreUnsupportedFields } from '../protocol/admission.js';
import { routes } from '../api/routes.js';
import { startHttpServer } from '../http/server.js';
import { checkParserNames } from './parsers.js';
import { FrontendMetrics, modelStats } from '../metrics/frontend.js';

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
  shutdownTimeoutSecs?: number;
  metricsPrefix?: string;
  logRequests?: boolean;
  corsOrigins?: string[];
  requestTimeoutSecs?: number;
  toolCallParser?: string;
  reasoningParser?: string;
  /** Router settings (mode, KV routing, queue); defaults in src/router/options.ts. */
  router?: Partial<RouterOptions>;
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
  const native = Model.load(resolve(o.modelPath));
  const name = o.modelName ?? basename(resolve(o.modelPath));
  const info = native.info();

  const mocks: Awaited<ReturnType<typeof startMockEngine>>[] = [];
  if (o.mock) {
    for (let i = 0; i < o.mockWorkers; i++) {
      mocks.push(await startMockEngine({ port: 0, mode: o.mock, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: name }));
    }
  }
  const clients: EngineClient[] = [...o.workers, ...mocks.map((m) => m.url)].map((url) => createEngineClient(url));
  const pool = new WorkerPool(clients, { model: name });
  await pool.start();

  const metrics = new FrontendMetrics(o.metricsPrefix);
  const model = new ServedModel(name, native, pool, modelStats(metrics, name), { tool: o.toolCallParser ?? null, reasoning: o.reasoningParser ?? null });
  const queued = metrics.queued.labels(name);
  const router = new ModelRouter(pool, o.router, { onQueueLength: (n) => queued.set(n) });
  attachRouter(pool, router);
  const lifecycle = { draining: false };
  const http = await startHttpServer({
    host: o.host,
    port: o.httpPort,
    maxBodyBytes: o.maxBodyBytes,
    apiKey: o.apiKey,
    maxConcurrentRequests: o.maxConcurrentRequests,
    metrics,
    logRequests: o.logRequests,
    corsOrigins: o.corsOrigins,
    requestTimeoutMs: (o.requestTimeoutSecs ?? 0) * 1000,
    routes: routes({ models: new Map([[name, model]]), ignoreUnsupportedFields: ignoreUnsupportedFields(), lifecycle, metrics }),
  });
  return {
    port: http.port,
    async close() {
      lifecycle.draining = true;
      await http.drain((o.shutdownTimeoutSecs ?? 30) * 1000);
      router.close();
      pool.close();
      await Promise.all(mocks.map((m) => m.close()));
    },
  };
}
