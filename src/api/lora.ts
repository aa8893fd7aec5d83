// vLLM's runtime LoRA API:
//   POST /v1/load_lora_adapter    {"lora_name", "lora_path", "base_model_name"?}
//   POST /v1/unload_lora_adapter  {"lora_name"}
// Loads (unloads) the adapter on every worker of its base model (SGLang's LoRA rpcs) and
// serves (stops serving) it as model `lora_name` in every shard. Success answers are
// vLLM's plain-text ones; failures are the usual error JSON: unknown base 404, duplicate
// name 400, engine refusal 400 with the engine's words, unknown adapter 404. Guarded like
// the admin endpoints (routes marked `admin`).

import { ApiError } from '../protocol/errors.js';
import type { AppContext } from './context.js';
import { localControl, unwrap } from './control.js';
import { checkLoad, loadOnWorkers, adapterRef, type AdapterRequest } from './adapters.js';
import type { Exchange } from './exchange.js';
import { modelNamed, readJsonObject } from './json-body.js';
import { log } from '../log.js';

const TEXT = 'text/plain; charset=utf-8';

function nameField(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  if (typeof v !== 'string' || v === '') throw ApiError.badRequest(`\`${key}\` is required (a non-empty string)`, key);
  return v;
}

/** Adapters being loaded by this thread (a second load of the same name is refused at once). */
const pending = new Set<string>();

/** Load at run time: every worker of the base, then every shard registers it. */
export async function loadAdapter(ctx: AppContext, r: AdapterRequest): Promise<void> {
  const base = checkLoad(ctx, r);
  if (pending.has(r.name)) throw ApiError.badRequest(`The lora adapter '${r.name}' is being loaded.`, 'lora_name', 'adapter_exists');
  pending.add(r.name);
  try {
    await loadOnWorkers(base, adapterRef(r.name, r.path));
    unwrap(await (ctx.control ?? localControl(ctx)).apply({ op: 'add-adapter', name: r.name, path: r.path, base: r.base }));
  } finally {
    pending.delete(r.name);
  }
}

/** Unload at run time: every shard stops serving it, then every worker of the base drops it. */
export async function unloadAdapter(ctx: AppContext, name: string): Promise<void> {
  const adapter = ctx.models.get(name)?.adapter;
  unwrap(await (ctx.control ?? localControl(ctx)).apply({ op: 'remove-adapter', name }));
  if (!adapter) return;
  const base = adapter.base;
  await Promise.all(
    base.pool.workers.map(async (w) => {
      try {
        await w.client.unloadAdapter(adapterRef(name, adapter.path));
      } catch (err) {
        log.warn(`worker ${w.id} did not unload LoRA adapter ${name}: ${(err as Error).message}`, { model: base.name, worker: w.id });
      }
    }),
  );
}

export function loadLoraAdapter(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const body = readJsonObject(ex);
    const name = nameField(body, 'lora_name');
    const path = nameField(body, 'lora_path');
    const base = body.base_model_name === undefined ? modelNamed(ctx, undefined).name : nameField(body, 'base_model_name');
    await loadAdapter(ctx, { name, path, base });
    ex.sendText(200, `Success: LoRA adapter '${name}' added successfully.`, TEXT);
  };
}

export function unloadLoraAdapter(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const name = nameField(readJsonObject(ex), 'lora_name');
    await unloadAdapter(ctx, name);
    ex.sendText(200, `Success: LoRA adapter '${name}' removed successfully.`, TEXT);
  };
}
