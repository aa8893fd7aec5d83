// LoRA adapters served as models of their own: loaded on every worker of their base model
// (SGLang's LoadLoRAAdapter), then registered under their name in every shard (the
// control plane's add-adapter change), so that a request naming the adapter renders and
// tokenizes with the base model's tokenizer and is generated with GenerateRequest.lora_id
// on the base model's workers, routed in the adapter's own KV namespace.
//
// Engine calls are made once, by the thread that received the request; the registration
// is applied by every shard in the same order. A worker that joins a model later is given
// the model's adapters first (syncAdapters). Loading is idempotent per engine: an adapter
// the engine already lists under the same id counts as loaded (another shard, or an
// earlier run, loaded it).

import { log } from '../log.js';
import { ApiError } from '../protocol/errors.js';
import { EngineError } from '../engine/errors.js';
import { protocolOf } from '../engine/factory.js';
import type { AdapterRef, EngineClient } from '../engine/types.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { modelStats } from '../metrics/frontend.js';
import type { AppContext } from './context.js';

export interface AdapterRequest {
  name: string;
  path: string;
  base: string;
}

/** The engine's view of an adapter: its id is its served name. */
export function adapterRef(name: string, path: string): AdapterRef {
  return { id: name, name, path };
}

/** What must hold before any engine is asked: the base exists and is a base, the name is free. */
export function checkLoad(ctx: AppContext, r: AdapterRequest): ServedModel {
  const base = ctx.models.get(r.base);
  if (!base) throw ApiError.notFound(`The base model \`${r.base}\` does not exist.`, 'base_model_name', 'model_not_found');
  if (base.adapter) throw ApiError.badRequest(`\`${r.base}\` is a LoRA adapter, not a base model.`, 'base_model_name', 'invalid_base_model');
  if (ctx.models.has(r.name)) throw ApiError.badRequest(`The lora adapter '${r.name}' has already been loaded.`, 'lora_name', 'adapter_exists');
  return base;
}

/** Refuses a worker that cannot serve adapters (vLLM's protocol has no LoRA field). */
export function checkWorkerServesAdapters(base: ServedModel, url: string): void {
  if (base.adapters.size > 0 && protocolOf(url) === 'vllm') {
    throw ApiError.badRequest(`model \`${base.name}\` serves LoRA adapters (${[...base.adapters.keys()].join(', ')}) and vLLM's engine protocol cannot select one; add an SGLang scheduler worker (grpc://)`, 'url', 'adapters_unsupported');
  }
}

/** Load on one engine unless it already lists the adapter under this id. */
async function ensureOn(client: EngineClient, a: AdapterRef): Promise<void> {
  try {
    await client.loadAdapter(a);
  } catch (err) {
    if (err instanceof EngineError && err.code === 'invalid_argument') {
      const listed = await client.listAdapters().catch(() => []);
      if (listed.some((x) => x.id === a.id)) return;
    }
    throw err;
  }
}

/** An engine failure of a load as the client's answer (no worker URL in it). */
function loadFailure(name: string, workerId: number, err: unknown): ApiError {
  return ApiError.from(err, { loadAdapter: name, worker: workerId });
}

/** Load `a` on every worker of `base`; on a failure, unload it from the ones that took it. */
export async function loadOnWorkers(base: ServedModel, a: AdapterRef): Promise<void> {
  const workers = base.pool.workers;
  const vllm = workers.find((w) => protocolOf(w.client.url) === 'vllm');
  if (vllm) throw ApiError.badRequest(`worker ${vllm.id} of \`${base.name}\` speaks vLLM's engine protocol, which can neither load nor select a LoRA adapter; LoRA adapters need SGLang scheduler workers (grpc://)`, 'base_model_name', 'adapters_unsupported');
  const results = await Promise.allSettled(workers.map((w) => ensureOn(w.client, a)));
  const failed = results.findIndex((r) => r.status === 'rejected');
  if (failed < 0) return;
  await Promise.allSettled(workers.filter((_, i) => results[i]!.status === 'fulfilled').map((w) => w.client.unloadAdapter(a)));
  throw loadFailure(a.name, workers[failed]!.id, (results[failed] as PromiseRejectedResult).reason);
}

/** Register the adapter view on this thread (the add-adapter change; every shard applies it). */
export function registerAdapter(ctx: AppContext, r: AdapterRequest): string {
  const base = checkLoad(ctx, r);
  const view = base.adapterView(r.name, r.path, modelStats(ctx.metrics, r.name));
  base.adapters.set(r.name, view);
  ctx.models.set(r.name, view);
  return JSON.stringify({ lora_name: r.name, base_model_name: base.name });
}

/** Unregister on this thread (the remove-adapter change). */
export function unregisterAdapter(ctx: AppContext, name: string): string {
  const m = ctx.models.get(name);
  if (!m || !m.adapter) {
    if (m) throw ApiError.badRequest(`\`${name}\` is a base model, not a LoRA adapter.`, 'lora_name', 'not_an_adapter');
    throw ApiError.notFound(`The lora adapter '${name}' cannot be found.`, 'lora_name', 'adapter_not_found');
  }
  m.adapter.base.adapters.delete(name);
  ctx.models.delete(name);
  return JSON.stringify({ lora_name: name, base_model_name: m.adapter.base.name });
}

/** The adapters of a model given to a worker that joins it. */
export async function syncAdapters(base: ServedModel, workerId: number, client: EngineClient): Promise<void> {
  for (const view of base.adapters.values()) {
    try {
      await ensureOn(client, adapterRef(view.name, view.adapter!.path));
    } catch (err) {
      throw loadFailure(view.name, workerId, err);
    }
  }
}

/** --lora NAME=PATH@BASE at startup: loaded on the base's workers, registered on this thread only (each shard does its own). */
export async function loadStartupAdapter(ctx: AppContext, r: AdapterRequest): Promise<void> {
  const base = checkLoad(ctx, r);
  await loadOnWorkers(base, adapterRef(r.name, r.path));
  registerAdapter(ctx, r);
}
