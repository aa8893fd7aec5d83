// /health's view of KV-aware routing for one model: each worker's block size and where
// it came from, the blocks the index holds for it, and a warning for every worker whose
// KV events are not all indexed, so a router that cannot see a cache says so.

import { UNAPPLIED_LABELS } from '../router/kv-ingest.js';
import { routerOfWorker, routersOf } from './model-routers.js';
import { declaredMismatch } from '../router/worker-slots.js';
import type { ServedModel } from '../pipeline/served-model.js';

export interface KvRoutingDetail {
  workers: { worker_id: number; role: string; block_size: number; block_size_from: string; indexed_blocks: number; kv_events: boolean }[];
  warnings?: string[];
}

export function kvRoutingDetail(model: ServedModel): KvRoutingDetail | undefined {
  const main = routersOf(model)[0];
  if (!main || main.opts.mode !== 'kv') return undefined;
  const workers: KvRoutingDetail['workers'] = [];
  const warnings: string[] = [];
  for (const w of model.pool.workers) {
    const t = routerOfWorker(model, w)?.slots.get(w.id);
    if (!t) continue;
    const ing = t.ingest;
    workers.push({ worker_id: w.id, role: w.role, block_size: ing.blockSize, block_size_from: ing.blockSizeSource, indexed_blocks: ing.blocks, kv_events: t.eventsSeen });
    const dropped = UNAPPLIED_LABELS.filter(([k]) => ing.stats[k] > 0).map(([k, label]) => `${ing.stats[k]} ${label}`);
    if (dropped.length > 0) warnings.push(`worker ${w.id}: stored-block KV events not indexed (${dropped.join(', ')}); see portico_frontend_kv_events_unapplied_total`);
    const declared = declaredMismatch(t);
    if (declared) warnings.push(`worker ${w.id}: its engine declares ${declared}-token blocks but its KV events carry ${ing.blockSize}-token blocks; indexed at ${ing.blockSize}`);
  }
  return warnings.length > 0 ? { workers, warnings } : { workers };
}
