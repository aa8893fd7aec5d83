// GET /v1/models: the served models, in OpenAI's list shape.

import type { AppContext } from './context.js';
import type { Exchange } from './exchange.js';

export function listModels(ctx: AppContext) {
  // The served set is fixed for the life of the process: serialise it once.
  let body: string | null = null;
  return (ex: Exchange): void => {
    body ??= render(ctx);
    ex.sendJson(200, body);
  };
}

function render(ctx: AppContext): string {
  const data = [...ctx.models.values()].map((m) => ({
    id: m.name,
    object: 'model',
    created: m.created,
    owned_by: 'portico',
    ...(m.info.contextLength !== null ? { max_model_len: m.info.contextLength } : {}),
  }));
  return JSON.stringify({ object: 'list', data });
}
