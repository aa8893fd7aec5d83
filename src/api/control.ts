// Control-plane changes (worker registry, busy thresholds) as data, so that with
// several server shards one change is applied by every shard in the same order (the
// shard that received the request hands it to a ControlPlane that relays it; see
// src/shards). Served alone, a change applies here directly.
//
// Changes arrive validated in form (types, ranges); what depends on state (model
// exists, worker exists or not) is checked when applying, identically in every shard.

import { ApiError } from '../protocol/errors.js';
import type { ControlChange, ControlPlane, ControlReply } from './control-change.js';
import { createEngineClient } from '../engine/factory.js';
import type { ModelRouter } from '../router/router.js';
import type { WorkerRole } from '../router/worker-pool.js';
import { routersOf } from './model-routers.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { baseModels, type AppContext } from './context.js';
import { modelNamed } from './json-body.js';
import { canonicalWorkerUrl, comparableWorkerUrl } from './worker-url.js';
import { checkWorkerServesAdapters, registerAdapter, syncAdapters, unregisterAdapter } from './adapters.js';

/**
 * Add worker `url` to model `name` at run time, in every shard (the admin endpoint's
 * change, for callers such as a discovery watch): the worker gets the model's LoRA
 * adapters, then takes requests once its first health check passes. Resolves to the
 * outcome (409 when it already serves the model, 404 for an unknown model).
 */
export function addWorkerToModel(ctx: AppContext, name: string, url: string, role: WorkerRole = 'aggregated'): Promise<ControlReply> {
  let canonical: string;
  try {
    canonical = canonicalWorkerUrl(url);
  } catch (err) {
    const e = ApiError.from(err);
    return Promise.resolve({ ok: false, status: e.status, message: e.message, type: e.type, code: e.code, param: e.param });
  }
  return (ctx.control ?? localControl(ctx)).apply({ op: 'add-worker', url: canonical, model: name, role });
}

/** Applies changes to this thread's models. */
export function localControl(ctx: AppContext): ControlPlane {
  return { apply: (change) => applyChange(ctx, change) };
}

/** The reply as the handler answers it: the body, or the error thrown. */
export function unwrap(r: ControlReply): { status: number; body: string } {
  if (r.ok) return r;
  throw new ApiError(r.status, r.message, { type: r.type, code: r.code, param: r.param });
}

export async function applyChange(ctx: AppContext, change: ControlChange): Promise<ControlReply> {
  try {
    switch (change.op) {
      case 'add-worker':
        return { ok: true, status: 201, body: await addWorker(ctx, change.url, change.model, change.role ?? 'aggregated') };
      case 'remove-worker':
        return { ok: true, status: 200, body: removeWorker(ctx, change.id) };
      case 'add-adapter':
        return { ok: true, status: 200, body: registerAdapter(ctx, change) };
      case 'remove-adapter':
        return { ok: true, status: 200, body: unregisterAdapter(ctx, change.name) };
      case 'set-thresholds': {
        const model = modelNamed(ctx, change.model);
        for (const r of routersOf(model)) r.setThresholds({ activeDecodeBlocks: change.activeDecodeBlocks, activePrefillTokens: change.activePrefillTokens });
        return { ok: true, status: 200, body: JSON.stringify(thresholdView(model)) };
      }
    }
  } catch (err) {
    const e = ApiError.from(err);
    return { ok: false, status: e.status, message: e.message, type: e.type, code: e.code, param: e.param };
  }
}

async function addWorker(ctx: AppContext, url: string, name: unknown, role: WorkerRole): Promise<string> {
  const model = modelNamed(ctx, name);
  // `url` is canonical (admin.ts); workers from --worker may not be.
  if (model.pool.list().some((w) => comparableWorkerUrl(w.url) === url)) throw new ApiError(409, `worker ${url} is already serving \`${model.name}\``, { param: 'url', code: 'worker_exists' });
  let client;
  try {
    client = createEngineClient(url);
  } catch (err) {
    throw ApiError.badRequest((err as Error).message, 'url');
  }
  try {
    checkWorkerServesAdapters(model, url);
  } catch (err) {
    client.close();
    throw err;
  }
  const w = await model.pool.add(client, role);
  try {
    // A worker that joins later gets the model's loaded adapters before it takes requests for them.
    await syncAdapters(model, w.id, client);
  } catch (err) {
    model.pool.remove(w.id);
    throw err;
  }
  return JSON.stringify({ model: model.name, worker: { id: w.id, url, healthy: w.healthy, inflight: 0, role: w.role } });
}

function removeWorker(ctx: AppContext, id: number): string {
  for (const m of baseModels(ctx)) {
    if (m.pool.remove(id)) return JSON.stringify({ model: m.name, removed: id });
  }
  throw ApiError.notFound(`worker ${id} does not exist`, 'id', 'unknown_worker');
}

export function routerOf(m: ServedModel): ModelRouter {
  const r = routersOf(m)[0];
  if (!r) throw ApiError.unavailable(`the router of \`${m.name}\` has no busy thresholds`);
  return r;
}

export function thresholdView(m: ServedModel) {
  const t = routerOf(m).thresholds;
  return { model: m.name, active_decode_blocks_threshold: t.activeDecodeBlocks ?? null, active_prefill_tokens_threshold: t.activePrefillTokens ?? null };
}
