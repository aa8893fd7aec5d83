// GET /v1/models: the served models, in OpenAI's list shape.

import type { AppContext } from './context.js';
import type { Exchange } from './exchange.js';

export function listModels(ctx: AppContext) {
  return (ex: Exchange): void => {
    const data = [...ctx.models.values()].map((m) => ({
      id: m.name,
      object: 'model',
      created: m.created,
      owned_by: 'portico',
      ...(m.info.contextLength !== null ? { max_model_len: m.info.contextLength } : {}),
    }));
    ex.sendJson(200, JSON.stringify({ object: 'list', data }));
  };
}
