// Worker administration at run time: list, add and remove a model's engine workers.
//   GET    /admin/workers           the workers of every model, with health and load
//   POST   /admin/workers           {"url": "grpc://HOST:PORT", "model"?: NAME} adds one
//   DELETE /admin/workers/:id       removes one (in-flight requests finish first)
// Guarded in the HTTP layer (routes marked `admin`, src/http/access.ts): --admin-api-key
// when set, else loopback clients only; POSTs are JSON only. Worker URLs are validated
// and canonicalised (worker-url.ts). Changes go through the context's control plane, so
// every server shard applies them (control.ts).

import { ApiError } from '../protocol/errors.js';
import { baseModels, type AppContext } from './context.js';
import { localControl, unwrap } from './control.js';
import type { Exchange } from './exchange.js';
import { readJsonObject } from './json-body.js';
import { canonicalWorkerUrl, withoutCredentials } from './worker-url.js';
import { WORKER_ROLES, type WorkerRole } from '../router/worker-pool.js';

export function listWorkers(ctx: AppContext) {
  return (ex: Exchange): void => {
    const models = baseModels(ctx).map((m) => ({ model: m.name, workers: m.pool.list().map((w) => ({ ...w, url: withoutCredentials(w.url) })) }));
    // With several shards, `inflight` counts the answering shard's requests: name it.
    ex.sendJson(200, JSON.stringify(ctx.shards ? { shard: ctx.shards.id, models } : { models }));
  };
}

export function addWorker(ctx: AppContext) {
  const control = ctx.control ?? localControl(ctx);
  return async (ex: Exchange): Promise<void> => {
    const { url, model, role } = readJsonObject(ex);
    if (typeof url !== 'string' || url === '') throw ApiError.badRequest('`url` is required: grpc://HOST:PORT or vllm+grpc://HOST:PORT', 'url');
    if (role !== undefined && !(WORKER_ROLES as readonly unknown[]).includes(role)) throw ApiError.badRequest(`\`role\` must be one of ${WORKER_ROLES.join(', ')}`, 'role');
    // Canonical before it goes anywhere: the duplicate check, every shard, the listing.
    const r = unwrap(await control.apply({ op: 'add-worker', url: canonicalWorkerUrl(url), model, role: role as WorkerRole | undefined }));
    ex.sendJson(r.status, r.body);
  };
}

export function removeWorker(ctx: AppContext) {
  const control = ctx.control ?? localControl(ctx);
  return async (ex: Exchange): Promise<void> => {
    const raw = ex.param(0);
    if (!/^\d+$/.test(raw)) throw ApiError.badRequest(`worker id must be a non-negative integer, got ${JSON.stringify(raw)}`, 'id');
    const r = unwrap(await control.apply({ op: 'remove-worker', id: Number(raw) }));
    ex.sendJson(r.status, r.body);
  };
}
