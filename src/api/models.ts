// GET /v1/models: the served models and LoRA adapters, in OpenAI's list shape (an adapter
// carries `parent`: its base model, as vLLM lists them; no filesystem paths are shown).
// GET /v1/models/{id}: one of them, or 404.

import { modelFor, type AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { poolsJson, poolsOf } from './pools.js';

export function listModels(ctx: AppContext) {
  // Adapters come and go at run time: the body is rendered again when the set changed.
  let body: string | null = null;
  let seen: ServedModel[] = [];
  return (ex: Exchange): void => {
    const now = [...ctx.models.values()];
    // A disaggregated model's pools change as workers come and go: rendered each time.
    if (body === null || now.length !== seen.length || now.some((m, i) => m !== seen[i] || m.pool.disaggregated)) {
      body = JSON.stringify({ object: 'list', data: now.map(card) });
      seen = now;
    }
    ex.sendJson(200, body);
  };
}

export function getModel(ctx: AppContext) {
  return (ex: Exchange): void => {
    ex.sendJson(200, JSON.stringify(card(modelFor(ctx, ex.param(0)))));
  };
}

function card(m: ServedModel) {
  return {
    id: m.name,
    object: 'model',
    created: m.created,
    owned_by: 'portico',
    parent: m.adapter ? m.adapter.base.name : null,
    ...(m.info.contextLength !== null ? { max_model_len: m.info.contextLength } : {}),
    ...(!m.adapter && m.pool.disaggregated ? { serving: 'disaggregated', pools: poolsJson(poolsOf(m)) } : {}),
  };
}
