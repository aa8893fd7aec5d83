// Worker administration at run time: list, add and remove a model's engine workers.
//   GET    /admin/workers           the workers of every model, with health and load
//   POST   /admin/workers           {"url": "grpc://HOST:PORT", "model"?: NAME} adds one
//   DELETE /admin/workers/:id       removes one (in-flight requests finish first)
// Protected by --api-key like the API itself.

import { ApiError } from '../protocol/errors.js';
import { createEngineClient } from '../engine/factory.js';
import type { AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { modelNamed, readJsonObject } from './json-body.js';

export function listWorkers(ctx: AppContext) {
  return (ex: Exchange): void => {
    const models = [...ctx.models.values()].map((m) => ({ model: m.name, workers: m.pool.list() }));
    ex.sendJson(200, JSON.stringify({ models }));
  };
}

export function addWorker(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const { url, model: name } = readJsonObject(ex);
    if (typeof url !== 'string' || url === '') throw ApiError.badRequest('`url` is required: grpc://HOST:PORT or vllm+grpc://HOST:PORT', 'url');
    const model = modelNamed(ctx, name);
    if (model.pool.list().some((w) => w.url === url)) throw new ApiError(409, `worker ${url} is already serving \`${model.name}\``, { param: 'url', code: 'worker_exists' });
    let client;
    try {
      client = createEngineClient(url);
    } catch (err) {
      throw ApiError.badRequest((err as Error).message, 'url');
    }
    const w = await model.pool.add(client);
    ex.sendJson(201, JSON.stringify({ model: model.name, worker: { id: w.id, url, healthy: w.healthy, inflight: 0 } }));
  };
}

export function removeWorker(ctx: AppContext) {
  return (ex: Exchange): void => {
    const raw = ex.param(0);
    if (!/^\d+$/.test(raw)) throw ApiError.badRequest(`worker id must be a non-negative integer, got ${JSON.stringify(raw)}`, 'id');
    const id = Number(raw);
    for (const m of ctx.models.values()) {
      if (m.pool.remove(id)) {
        ex.sendJson(200, JSON.stringify({ model: m.name, removed: id }));
        return;
      }
    }
    throw ApiError.notFound(`worker ${id} does not exist`, 'id', 'unknown_worker');
  };
}
