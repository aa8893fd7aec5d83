// Small JSON bodies of the operator and debug endpoints (admin, busy thresholds, /parse/*):
// validated by the gate exactly as the API bodies are (nesting, escapes: the same 400s), then
// parsed whole, since they are small and off the hot path.

import { ApiError } from '../protocol/errors.js';
import { checkJsonObject } from '../protocol/fields.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { baseModels, type AppContext } from './context.js';
import type { Exchange } from './exchange.js';

export function readJsonObject(ex: Exchange): Record<string, unknown> {
  checkJsonObject(ex.body);
  let body: unknown;
  try {
    body = JSON.parse(ex.body.toString('utf8'));
  } catch (err) {
    throw ApiError.badRequest(`invalid JSON in request body: ${(err as Error).message}`, null, 'invalid_json');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw ApiError.badRequest('request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** The (base) model a body names — a LoRA adapter's base for an adapter — or the only served model when it names none. */
export function modelNamed(ctx: AppContext, name: unknown): ServedModel {
  if (name !== undefined) {
    if (typeof name !== 'string') throw ApiError.badRequest('`model` must be a string', 'model');
    const m = ctx.models.get(name);
    if (!m) throw ApiError.notFound(`The model \`${name}\` does not exist.`, 'model', 'model_not_found');
    return m.adapter?.base ?? m;
  }
  const bases = baseModels(ctx);
  if (bases.length !== 1) throw ApiError.badRequest('`model` is required when several models are served', 'model');
  return bases[0]!;
}
