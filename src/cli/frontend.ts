// One HTTP frontend on the current thread — the model loaded natively, its worker
// pool, router, routes and uWS app — and the embedded mock engines of --mock. `portico
// serve` runs one frontend on the main thread, or one per shard thread (src/shards).

import { basename, resolve } from 'node:path';
import { Model } from '../native/core.js';
import { createEngineClient } from '../engine/factory.js';
import type { EngineClient } from '../engine/types.js';
import { startMockEngine } from '../mock/engine-server.js';
import { WorkerPool } from '../router/worker-pool.js';
import { ModelRouter } from '../router/router.js';
import { attachRouter } from '../router/registry.js';
import { ServedModel } from '../pipeline/served-model.js';
import { ignoreUnsupportedFields } from '../protocol/admission.js';
import { routes } from '../api/routes.js';
import type { AppContext, ShardLink } from '../api/context.js';
import type { ControlPlane } from '../api/control.js';
import { startHttpServer } from '../http/server.js';
import { FrontendMetrics, modelStats } from '../metrics/frontend.js';
import type { Running, ServeOptions } from './serve.js';
import { installLeanAsyncBind } from '../runtime/lean-async-bind.js';

/** The embedded mock engines of --mock (once per process, whatever the shard count). */
export async function startMocks(o: ServeOptions, native?: Model): Promise<{ urls: string[]; close(): Promise<void> }> {
  const mocks: Awaited<ReturnType<typeof startMockEngine>>[] = [];
  if (o.mock) {
    const info = (native ?? Model.load(resolve(o.modelPath))).info();
    const name = modelName(o);
    for (let i = 0; i < o.mockWorkers; i++) {
      mocks.push(await startMockEngine({ port: 0, mode: o.mock, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: name }));
    }
  }
  return { urls: mocks.map((m) => m.url), close: async () => void (await Promise.all(mocks.map((m) => m.close()))) };
}

function modelName(o: ServeOptions): string {
  return o.modelName ?? basename(resolve(o.modelPath));
}

/** One model's router state shared by every shard: the load table and the number of queued requests. */
export interface SharedRouterState {
  load: SharedArrayBuffer;
  /** One Int32. */
  queueDepth: SharedArrayBuffer;
  /** Session pins (router/shared-session-affinity.ts). */
  sessions: SharedArrayBuffer;
}

/** What a shard shares with the others (absent when serving alone). */
export interface ShardContext {
  link: ShardLink;
  control: ControlPlane;
  /** What the shards' routers share, one per model (models in serving order). */
  models: SharedRouterState[];
}

export interface Frontend extends Running {
  readonly ctx: AppContext;
}

/** One HTTP frontend on this thread: model, workers, router, routes, uWS app. */
export async function startFrontend(o: ServeOptions, workerUrls: string[], native: Model, shard?: ShardContext): Promise<Frontend> {
  installLeanAsyncBind(); // before the engine clients open their first http2 stream
  const name = modelName(o);
  const clients: EngineClient[] = workerUrls.map((url) => createEngineClient(url));
  const pool = new WorkerPool(clients, { model: name });
  await pool.start();

  const metrics = new FrontendMetrics(o.metricsPrefix, shard?.link.id);
  const model = new ServedModel(name, native, pool, modelStats(metrics, name), { tool: o.toolCallParser ?? null, reasoning: o.reasoningParser ?? null }, o.maxPromptTokens);
  await model.adoptEngineContext();
  const queued = metrics.queued.labels(name);
  const router = new ModelRouter(pool, o.router, { onQueueLength: (n) => queued.set(n), loadBuffer: shard?.models[0]!.load, queueDepth: shard ? new Int32Array(shard.models[0]!.queueDepth) : undefined, sessionTable: shard?.models[0]!.sessions });
  attachRouter(pool, router);
  const lifecycle = { draining: false };
  const ctx: AppContext = { models: new Map([[name, model]]), ignoreUnsupportedFields: ignoreUnsupportedFields(), lifecycle, metrics, control: shard?.control, shards: shard?.link };
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
    routes: routes(ctx),
  });
  return {
    port: http.port,
    ctx,
    async close() {
      lifecycle.draining = true;
      await http.drain((o.shutdownTimeoutSecs ?? 30) * 1000);
      router.close();
      pool.close();
    },
  };
}
