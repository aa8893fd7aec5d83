// GET /metrics: Prometheus text format. Worker gauges are read from the pools at
// scrape time; everything else was recorded as requests ran. With several server
// shards, the shard that is asked collects every shard's values and merges them
// (counters and histograms add up; see metrics/snapshot.ts).

import { performance } from 'node:perf_hooks';
import { mergeSnapshots, renderFamilies } from '../metrics/snapshot.js';
import { ignoredHeaderCounts } from '../protocol/ignored-headers.js';
import { baseModels, type AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { routerOfWorker, routersOf } from './model-routers.js';
import { WORKER_ROLES } from '../router/worker-pool.js';
import { LoadField } from '../router/load-table.js';
import { ranksOf } from '../router/worker-slots.js';
import { UNAPPLIED_LABELS } from '../router/kv-ingest.js';
import type { ServedModel } from '../pipeline/served-model.js';

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * Sets the gauges read at scrape time (memory, event loop, workers); call before a snapshot.
 * The event-loop figures cost nothing between scrapes: utilization is the loop's own
 * accounting, and the lag is one setImmediate queued at each scrape, read at the next. A
 * sampling timer (monitorEventLoopDelay) would wake an idle process every few milliseconds,
 * and on a lightly loaded frontend those wake-ups cost more CPU than the requests
 * (docs/architecture.md, "What a lone request costs").
 */
export function scrapeGauges(ctx: AppContext): () => void {
  let lagNs = 0;
  let queuedAt = 0n;
  const probe = (): void => {
    lagNs = Number(process.hrtime.bigint() - queuedAt);
    queuedAt = 0n;
  };
  let elu = performance.eventLoopUtilization();
  return () => {
    const m = ctx.metrics;
    m.residentMemory.labels().set(process.memoryUsage.rss());
    m.heapUsed.labels().set(process.memoryUsage().heapUsed);
    m.loopLag.labels().set(lagNs / 1e9);
    if (queuedAt === 0n) {
      queuedAt = process.hrtime.bigint();
      setImmediate(probe);
    }
    const now = performance.eventLoopUtilization();
    m.loopUtilization.labels().set(performance.eventLoopUtilization(now, elu).utilization);
    elu = now;
    // Other frontend replicas' requests (replica sync) count once: in shard 0's figure.
    const withRemote = ctx.eventPlane?.replicaSync === true && (!ctx.shards || ctx.shards.id === 0);
    for (const model of baseModels(ctx)) {
      modelGauges(m, model);
      const kvMode = routersOf(model)[0]?.opts.mode === 'kv';
      for (const w of model.pool.workers) {
        const id = String(w.id);
        const own = routerOfWorker(model, w);
        const kv = kvMode ? own : null;
        // Replica sync shares the main pool's load only.
        const router = withRemote && w.role !== 'prefill' ? kv : null;
        const t = router?.slots.get(w.id);
        const remote = t ? router!.load.remoteOf(t.slot, LoadField.Requests) : 0;
        m.workerInflight.labels(model.name, id).set(w.inflight + remote);
        m.workerHealthy.labels(model.name, id).set(w.healthy ? 1 : 0);
        for (const role of WORKER_ROLES) m.workerRole.labels(model.name, id, role).set(w.role === role ? 1 : 0);
        const k = kv?.slots.get(w.id);
        if (k) {
          m.workerKvBlocks.labels(model.name, id).set(k.ingest.blocks);
          m.workerKvBlockSize.labels(model.name, id).set(k.ingest.blockSize);
          const st = k.ingest.stats;
          for (const [reason, n] of UNAPPLIED_LABELS) if (st[reason] > 0) m.kvEventsUnapplied.labels(model.name, id, n).set(st[reason]);
        }
        const src = k?.source?.stats;
        if (src) {
          m.kvEventBatches.labels(model.name, id).set(src.batches);
          m.kvEventGaps.labels(model.name, id).set(src.gaps);
        }
      }
    }
    for (const [h, n] of ignoredHeaderCounts()) m.ignoredHeaders.labels(h).value = n;
    if (ctx.discovery) {
      const d = ctx.discovery.view();
      m.discoveryConnected.labels().set(d.connected ? 1 : 0);
      m.discoveryReconnects.labels().set(d.reconnects);
      m.discoveryWorkers.labels().set(d.workers);
      m.discoveryIgnored.labels().set(d.ignored + d.invalid);
    }
    if (m.shardRequests && ctx.shards) m.shardRequests.labels(String(ctx.shards.id)).value = m.requests.total();
  };
}

/**
 * Dynamo's model_* configuration gauges and its per-worker load gauges. Portico's router
 * keeps load per worker, not per data-parallel rank: dp_rank is "0" for a one-rank worker
 * and "all" for the sum over the ranks of a worker with several.
 */
function modelGauges(m: AppContext['metrics'], model: ServedModel): void {
  if (model.info.contextLength !== null) m.modelContextLength.labels(model.name).set(model.info.contextLength);
  if (routersOf(model).length === 0) return;
  let capacity = 0;
  let blockSize = 0;
  let maxSeqs = 0;
  let batched = 0;
  for (const w of model.pool.workers) {
    const router = routerOfWorker(model, w);
    const t = router?.slots.get(w.id);
    if (!router || !t) continue;
    capacity = Math.max(capacity, router.load.get(t.slot, LoadField.CapacityBlocks));
    blockSize = Math.max(blockSize, t.ingest.blockSize);
    maxSeqs = Math.max(maxSeqs, t.declared.maxNumSeqs);
    batched = Math.max(batched, t.declared.maxNumBatchedTokens);
    const labels = [model.name, String(w.id), ranksOf(t) > 1 ? 'all' : '0', w.role === 'prefill' ? 'prefill' : 'decode'] as const;
    m.workerActiveDecodeBlocks.labels(...labels).set(router.load.get(t.slot, LoadField.DecodeBlocks));
    m.workerActivePrefillTokens.labels(...labels).set(router.load.get(t.slot, LoadField.PrefillTokens));
  }
  if (capacity > 0) m.modelTotalKvBlocks.labels(model.name).set(capacity);
  if (blockSize > 0) m.modelKvCacheBlockSize.labels(model.name).set(blockSize);
  if (maxSeqs > 0) m.modelMaxNumSeqs.labels(model.name).set(maxSeqs);
  if (batched > 0) m.modelMaxNumBatchedTokens.labels(model.name).set(batched);
}

export function metrics(ctx: AppContext) {
  const shards = ctx.shards;
  if (shards) {
    return async (ex: Exchange): Promise<void> => {
      const all = await shards.collectMetrics();
      ex.sendText(200, renderFamilies(mergeSnapshots(all)), CONTENT_TYPE);
    };
  }
  const refresh = scrapeGauges(ctx);
  return (ex: Exchange): void => {
    refresh();
    ex.sendText(200, ctx.metrics.registry.render(), CONTENT_TYPE);
  };
}
