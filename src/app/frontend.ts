// One HTTP frontend on the current thread: per model a worker pool, router and served
// model; the routes and uWS app. `portico serve` (./serve.ts) runs one frontend on the main
// thread, or one per shard thread (src/shards/shard-thread.ts).

import type { Model } from '../native/core.js';
import { createEngineClient } from '../engine/factory.js';
import { WorkerPool } from '../router/worker-pool.js';
import { ModelRouter } from '../router/router.js';
import { DisaggregatedRouter } from '../router/disaggregated-router.js';
import { ServedModel } from '../pipeline/served-model.js';
import { loadVisionModel } from '../pipeline/vision-model.js';
import { ImageStore } from '../pipeline/image-store.js';
import { ignoreUnsupportedFields } from '../protocol/admission.js';
import { routes } from '../api/routes.js';
import type { AppContext, ShardLink } from '../api/context.js';
import type { ControlPlane } from '../api/control-change.js';
import { startHttpServer } from '../http/server.js';
import { FrontendMetrics, modelStats } from '../metrics/frontend.js';
import type { Running, ServeOptions } from './options.js';
import { installLeanAsyncBind } from '../runtime/lean-async-bind.js';
import { configureStreams } from '../api/sse.js';
import { DiscoveryStatus } from '../discovery/status.js';
import { startEventPlane, type FrontendEventPlane } from './event-plane.js';
import { openStore, DEFAULT_STORE_URL } from '../store/open.js';
import { startKserveServer, type KserveServer } from '../kserve/server.js';
import { startProcessors } from '../processors/start.js';
import { threadLimits } from './rate-limits.js';
import { RequestTracer } from '../tracing/tracer.js';
import type { SpanOutcomes } from '../tracing/export.js';

/** The engine client options of --engine-first-response-timeout-secs (undefined: the client's default). */
export function engineClientOptions(o: ServeOptions): { firstResponseTimeoutMs: number } | undefined {
  const ms = secs(o.faults?.firstResponseTimeoutSecs);
  return ms === undefined ? undefined : { firstResponseTimeoutMs: ms };
}

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
  /** The prefill pool's load table and queue depth (disaggregated serving). */
  prefillLoad: SharedArrayBuffer;
  prefillQueueDepth: SharedArrayBuffer;
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

/** One HTTP frontend on this thread: its models (each with its workers, router and tokenizer), routes, uWS app. */
export async function startFrontend(o: ServeOptions, natives: ReadonlyMap<string, Model>, shard?: ShardContext): Promise<Frontend> {
  installLeanAsyncBind(); // before the engine clients open their first http2 stream
  const f = o.faults ?? {};
  configureStreams({ peekMs: f.precommitPeekMs, keepAliveMs: secs(f.keepAliveSecs), stallMs: secs(f.stallTimeoutSecs), writeIntervalMs: f.writeIntervalMs });
  const metrics = new FrontendMetrics(o.metricsPrefix, shard?.link.id);
  // One id sequence for every model's workers: an id names one worker (DELETE /admin/workers/:id).
  const ids = { next: 0 };
  const models = new Map<string, ServedModel>();
  // One store of fetched and processed images for every model of this thread.
  const images = new ImageStore(o.images, (model, source) => metrics.images.labels(model, source).inc());
  const routers: DisaggregatedRouter[] = [];
  const pools: WorkerPool[] = [];
  // --event-plane: one NATS connection for this frontend; each model's KV sources and replica sync use it.
  let plane: FrontendEventPlane | null = null;
  try {
    plane = await startEventPlane(o, shard?.link.id ?? 0);
    for (const [i, spec] of o.models.entries()) {
      const name = spec.name;
      const client = (url: string) => createEngineClient(url, engineClientOptions(o));
      const clients = [
        ...spec.workers.map((url) => ({ client: client(url), role: 'aggregated' as const })),
        ...(spec.prefillWorkers ?? []).map((url) => ({ client: client(url), role: 'prefill' as const })),
        ...(spec.decodeWorkers ?? []).map((url) => ({ client: client(url), role: 'decode' as const })),
      ];
      const pool = new WorkerPool(clients, { model: name, ids, healthIntervalMs: secs(f.healthCheckIntervalSecs), breaker: { consecutive: f.breakerFailures, failureRate: f.breakerFailureRate } });
      pools.push(pool);
      await pool.start();
      const queued = metrics.queued.labels(name);
      const shared = shard?.models[i];
      const main = new ModelRouter(pool.view(['aggregated', 'decode']), o.router, { onQueueLength: (n) => queued.set(n), loadBuffer: shared?.load, queueDepth: shared ? new Int32Array(shared.queueDepth) : undefined, sessionTable: shared?.sessions, kvSource: plane?.kvSource(name) });
      const prefillQueued = metrics.prefillQueued.labels(name);
      const prefill = new ModelRouter(pool.view(['prefill']), o.router, { onQueueLength: (n) => prefillQueued.set(n), loadBuffer: shared?.prefillLoad, queueDepth: shared ? new Int32Array(shared.prefillQueueDepth) : undefined, kvSource: plane?.kvSource(name) });
      const fallback = metrics.disaggFallback.labels(name);
      const router = new DisaggregatedRouter(pool, main, prefill, { enforce: o.disagg?.enforce ?? false, onFallback: () => fallback.inc() });
      routers.push(router);
      plane?.attach(name, main);
      const parsers = { tool: spec.toolCallParser ?? o.toolCallParser ?? null, reasoning: spec.reasoningParser ?? o.reasoningParser ?? null };
      const model = new ServedModel(name, natives.get(name)!, pool, router, modelStats(metrics, name), parsers, spec.maxPromptTokens ?? o.maxPromptTokens, spec.path);
      if (o.migration) model.migration = { limit: o.migration.limit, maxSeqLen: o.migration.maxSeqLen };
      if (o.disagg) model.pd = { bootstrapPort: o.disagg.bootstrapPort, rendezvousTimeoutMs: o.disagg.rendezvousTimeoutSecs * 1000 };
      model.vision = loadVisionModel(name, spec.path, model.native, images);
      await model.adoptEngineFacts();
      models.set(name, model);
    }
  } catch (err) {
    plane?.detach();
    for (const r of routers) r.close();
    for (const p of pools) p.close();
    await plane?.close();
    throw err;
  }
  const lifecycle = { draining: false };
  const discovery = o.discoveryStatus ? new DiscoveryStatus(o.discoveryStatus) : undefined;
  const rs = o.responsesStore ?? { url: DEFAULT_STORE_URL, ttlSecs: 30 * 24 * 3600, maxRows: 0 };
  const responseStore = await openStore(rs.url, { ttlMs: rs.ttlSecs * 1000, maxRows: rs.maxRows });
  const tenantPerKey = o.apiKey !== undefined && o.apiKey.length > 0;
  // One count of admitted generations for HTTP and gRPC (and every shard): the limit is per process.
  const admitted = shard?.admitted ?? new SharedArrayBuffer(4);
  const paths = new Map(o.models.map((m) => [m.name, m.path]));
  const processors = await startProcessors({ name: o.chatProcessor, frontendConfig: o.frontendConfig, options: o.chatProcessorConfig }, models, paths);
  // This thread's view of the process's per-key budgets (inactive without limits).
  const rateLimits = threadLimits(o.rateLimitShare);
  plane?.attachLimits(rateLimits);
  const tracer = o.tracing ? new RequestTracer(o.tracing, spanOutcomes(metrics)) : null;
  const ctx: AppContext = { models, ignoreUnsupportedFields: ignoreUnsupportedFields(), lifecycle, metrics, control: shard?.control, shards: shard?.link, chatProcessors: processors?.slots, responseStore, tenantPerKey, discovery, eventPlane: plane?.status, rateLimits, tracer };
  const http = await startHttpServer({
    host: o.host,
    port: o.httpPort,
    maxBodyBytes: o.maxBodyBytes,
    apiKey: o.apiKey,
    adminApiKey: o.adminApiKey,
    metricsApiKey: o.metricsApiKey,
    maxConcurrentRequests: o.maxConcurrentRequests,
    admitted,
    exclusivePort: !shard,
    metrics,
    logRequests: o.logRequests,
    corsOrigins: o.corsOrigins,
    requestTimeoutMs: (o.requestTimeoutSecs ?? 0) * 1000,
    rateLimits,
    routes: routes(ctx),
    tracer,
  });
  // The KServe gRPC face: one server per process, on this thread or on shard 0's.
  let grpc: KserveServer | null = null;
  if (o.grpcPort !== undefined && (shard?.link.id ?? 0) === 0) {
    try {
      grpc = await startKserveServer({
        host: o.host,
        port: o.grpcPort,
        ctx,
        apiKey: o.apiKey,
        maxMessageBytes: o.maxBodyBytes,
        limits: { maxConcurrentRequests: o.maxConcurrentRequests ?? 0, admitted, requestTimeoutMs: (o.requestTimeoutSecs ?? 0) * 1000 },
      });
    } catch (err) {
      http.close();
      processors?.close();
      plane?.detach();
      for (const r of routers) r.close();
      for (const p of pools) p.close();
      await plane?.close();
      throw err;
    }
  }
  return {
    port: http.port,
    grpcPort: grpc?.port,
    ctx,
    async close() {
      lifecycle.draining = true;
      const grace = (o.shutdownTimeoutSecs ?? 30) * 1000;
      await Promise.all([http.drain(grace), grpc?.close(grace)]);
      processors?.close();
      plane?.detach();
      for (const r of routers) r.close();
      for (const p of pools) p.close();
      await plane?.close();
      await responseStore?.close();
      // What is still queued goes out (for 2 s at most).
      await tracer?.shutdown();
    },
  };
}

/** The span counters of /metrics (portico_frontend_trace_spans_total). */
function spanOutcomes(m: FrontendMetrics): SpanOutcomes {
  const exported = m.traceSpans.labels('exported');
  const failed = m.traceSpans.labels('failed');
  const dropped = m.traceSpans.labels('dropped');
  return { exported: (n) => exported.inc(n), failed: (n) => failed.inc(n), dropped: (n) => dropped.inc(n) };
}
