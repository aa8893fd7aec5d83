// GET /metrics: Prometheus text format. Worker gauges are read from the pools at
// scrape time; everything else was recorded as requests ran.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { AppContext } from './context.js';
import type { Exchange } from './exchange.js';

export function metrics(ctx: AppContext) {
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  return (ex: Exchange): void => {
    const m = ctx.metrics;
    m.residentMemory.labels().set(process.memoryUsage.rss());
    m.heapUsed.labels().set(process.memoryUsage().heapUsed);
    m.loopLag.labels().set(lag.percentile(99) / 1e9);
    lag.reset();
    for (const model of ctx.models.values()) {
      for (const w of model.pool.workers) {
        const id = String(w.id);
        m.workerInflight.labels(model.name, id).set(w.inflight);
        m.workerHealthy.labels(model.name, id).set(w.healthy ? 1 : 0);
      }
    }
    ex.sendText(200, m.registry.render(), 'text/plain; version=0.0.4; charset=utf-8');
  };
}
