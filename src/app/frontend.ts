// One HTTP frontend on the current thread: the model's worker pool, router, served
// model, routes and uWS app. `portico serve` (./serve.ts) runs one frontend on the main
// thread, or one per shard thread (src/shards/shard-thread.ts).

import type { Model } from '../native/core.js';
import { createEngineClient } from '../engine/factory.js';
import type { EngineClient } from '../engine/types.js';
import { WorkerPool } from '../router/worker-pool.js';
import { ModelRouter } from '../router/router.js';
import { ServedModel } from '../pipeline/served-model.js';
import { ignoreUnsupportedFields } from '../protocol/admission.js';
import { routes } from '../api/routes.js';
import type { AppContext, ShardLink } from '../api/context.js';
import type { ControlPlane } from '../api/control-change.js';
import { startHttpServer } from '../http/server.js';
import { FrontendMetrics, modelStats } from '../metrics/frontend.js';
import { modelName, type Running, type ServeOptions } from './options.js';
import { installLeanAsyncBind } from '../runtime/lean-async-bind.js';
import { configureStreams } from '../api/sse.js';
import { DiscoveryStatus } from '../discovery/status.js';
import { startEventPlane } from './event-plane.js';

/** Seconds (a flag) to ms; undefined stays undefined (the default applies). */
function secs(s: number | undefined): number | undefined {
  return s === undefined ? undefined : s * 1000;
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
  /** The generations admitted by every shard (one Int32): --max-concurrent-requests is per process. */
  admitted?: SharedArrayBuffer;
}

export interface Frontend extends Running {
  readonly ctx: AppContext;
}

/** One HTTP frontend on this thread: model, workers, router, routes, uWS app. */
export async function startFrontend(o: ServeOptions, workerUrls: string[], native: Model, shard?: ShardContext): Promise<Frontend> {
  installLeanAsyncBind(); // before the engine clients open their first http2 stream
  const name = modelName(o);
  const f = o.faults ?? {};
  const clients: EngineClient[] = workerUrls.map((url) => createEngineClient(url, secs(f.firstResponseTimeoutSecs) === undefined ? undefined : { firstResponseTimeoutMs: secs(f.firstResponseTimeoutSecs) }));
  const pool = new WorkerPool(clients, { model: name, healthIntervalMs: secs(f.healthCheckIntervalSecs), breaker: { consecutive: f.breakerFailures, failureRate: f.breakerFailureRate } });
  configureStreams({ peekMs: f.precommitPeekMs, keepAliveMs: secs(f.keepAliveSecs), stallMs: secs(f.stallTimeoutSecs) });
  await pool.start();

  const metrics = new FrontendMetrics(o.metricsPrefix, shard?.link.id);
  const queued = metrics.queued.labels(name);
  const plane = await startEventPlane(o, name, shard?.link.id ?? 0);
  const router = new ModelRouter(pool, o.router, { onQueueLength: (n) => queued.set(n), loadBuffer: shard?.models[0]!.load, queueDepth: shard ? new Int32Array(shard.models[0]!.queueDepth) : undefined, sessionTable: shard?.models[0]!.sessions, kvSource: plane?.kvSource });
  plane?.attach(router);
  const model = new ServedModel(name, native, pool, router, modelStats(metrics, name), { tool: o.toolCallParser ?? null, reasoning: o.reasoningParser ?? null }, o.maxPromptTokens);
  await model.adoptEngineContext();
  const lifecycle = { draining: false };
  const discovery = o.discoveryStatus ? new DiscoveryStatus(o.discoveryStatus) : undefined;
  const ctx: AppContext = { models: new Map([[name, model]]), ignoreUnsupportedFields: ignoreUnsupportedFields(), lifecycle, metrics, control: shard?.control, shards: shard?.link, discovery, eventPlane: plane?.status };
  const http = await startHttpServer({
    host: o.host,
    port: o.httpPort,
    maxBodyBytes: o.maxBodyBytes,
    apiKey: o.apiKey,
    adminApiKey: o.adminApiKey,
    metricsApiKey: o.metricsApiKey,
    maxConcurrentRequests: o.maxConcurrentRequests,
    admitted: shard?.admitted,
    exclusivePort: !shard,
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
      plane?.detach();
      router.close();
      pool.close();
      await plane?.close();
    },
  };
}
