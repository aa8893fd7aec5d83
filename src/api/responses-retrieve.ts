// The stored-response routes: GET /v1/responses/{id}, DELETE /v1/responses/{id} and
// GET /v1/responses/{id}/input_items (OpenAI's cursor list: limit 1..100, default 20;
// order desc (default) or asc; after = an item id). Each reads only the caller's tenant:
// another key's response is the same 404 as an unknown id.

import { ApiError } from '../protocol/errors.js';
import { readInclude } from '../protocol/responses-include.js';
import type { StoredResponse } from '../store/types.js';
import type { AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { notFound, requireStore, tenantOf } from './responses-state.js';

function query(ex: Exchange): URLSearchParams {
  return new URLSearchParams(ex.query ?? '');
}

/** include / include[] from the query string, checked as on POST. */
function includeOf(ctx: AppContext, q: URLSearchParams): string[] {
  const values = [...q.getAll('include'), ...q.getAll('include[]')];
  return readInclude(values, ctx.ignoreUnsupportedFields);
}

async function find(ctx: AppContext, ex: Exchange): Promise<StoredResponse> {
  const id = ex.param(0);
  const store = requireStore(ctx, null);
  const r = await store.get(tenantOf(ctx, ex), id).catch(unavailable);
  if (!r) throw notFound(id);
  return r;
}

function unavailable(err: unknown): never {
  throw ApiError.from(err).status === 500 ? ApiError.unavailable('the responses store is unavailable; retry shortly', 'store_unavailable') : err;
}

export function retrieveResponse(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const q = query(ex);
    includeOf(ctx, q);
    if (q.has('stream') && q.get('stream') !== 'false') {
      throw ApiError.badRequest('`stream` is not supported on GET /v1/responses/{id}: the stored response is returned whole', 'stream', 'unsupported_parameter');
    }
    const r = await find(ctx, ex);
    ex.sendJson(200, JSON.stringify(r.response));
  };
}

export function deleteResponse(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const id = ex.param(0);
    const store = requireStore(ctx, null);
    const deleted = await store.delete(tenantOf(ctx, ex), id).catch(unavailable);
    if (!deleted) throw notFound(id);
    ex.sendJson(200, JSON.stringify({ id, object: 'response', deleted: true }));
  };
}

export function listInputItems(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const q = query(ex);
    includeOf(ctx, q);
    const limit = q.has('limit') ? Number(q.get('limit')) : 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw ApiError.badRequest(`\`limit\` must be an integer from 1 to 100, got ${JSON.stringify(q.get('limit'))}`, 'limit');
    const order = q.get('order') ?? 'desc';
    if (order !== 'asc' && order !== 'desc') throw ApiError.badRequest(`\`order\` must be asc or desc, got ${JSON.stringify(order)}`, 'order');
    if (q.has('before')) throw ApiError.badRequest('`before` is not supported: page with `after`', 'before', 'unsupported_parameter');
    const r = await find(ctx, ex);
    const items = (order === 'asc' ? r.input : [...r.input].reverse()) as { id: string }[];
    let start = 0;
    const after = q.get('after');
    if (after !== null) {
      const at = items.findIndex((i) => i.id === after);
      if (at < 0) throw ApiError.badRequest(`\`after\`: no input item with id '${after}' in response '${r.id}'`, 'after');
      start = at + 1;
    }
    const data = items.slice(start, start + limit);
    ex.sendJson(200, JSON.stringify({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < items.length }));
  };
}
