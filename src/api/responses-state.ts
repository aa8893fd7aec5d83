// The stateful side of POST /v1/responses: which tenant a request belongs to, the
// previous_response_id chain as conversation items, and the store write that must be
// durable before the client sees the response complete.

import { createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../protocol/errors.js';
import type { Json, JsonObject as Obj } from '../protocol/json.js';
import type { ResponsesRequest } from '../protocol/responses-request.js';
import type { ResponseStore, StoredResponse } from '../store/types.js';
import { log } from '../log.js';
import type { AppContext } from './context.js';
import type { Exchange } from './exchange.js';

/**
 * The tenant: a digest of the API key the request was let in with (the HTTP layer checked
 * it), or '' when the server has no keys. Only the digest is stored.
 */
export function tenantOf(ctx: AppContext, ex: Exchange): string {
  if (!ctx.tenantPerKey) return '';
  const auth = ex.header('authorization');
  const key = auth.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : ex.header('x-api-key');
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}

/** OpenAI's 404 for an id it does not have (type invalid_request_error, as OpenAI sends it). */
export function notFound(id: string, param: string | null = null, message = `Response with id '${id}' not found.`): ApiError {
  return new ApiError(404, message, { type: 'invalid_request_error', param });
}

function storeFailed(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  log.error('responses store failed', { error: err instanceof Error ? err.message : String(err) });
  return ApiError.unavailable('the responses store is unavailable; retry shortly', 'store_unavailable');
}

/** The store, or a 400 naming `param` when the server runs without one. */
export function requireStore(ctx: AppContext, param: string | null): ResponseStore {
  if (ctx.responseStore) return ctx.responseStore;
  throw new ApiError(400, 'this server stores no responses (started with --responses-store off)', { param, code: 'unsupported_parameter' });
}

/** previous_response_id's chain as items, oldest first: each response's input, then its output. */
export async function chainItems(ctx: AppContext, tenant: string, req: ResponsesRequest): Promise<Json[]> {
  const id = req.previousResponseId!;
  const store = requireStore(ctx, 'previous_response_id');
  let chain;
  try {
    chain = await store.chain(tenant, req.model, id);
  } catch (err) {
    throw storeFailed(err);
  }
  if (chain.kind === 'missing') throw notFound(id, 'previous_response_id');
  if (chain.kind === 'broken') {
    throw notFound(id, 'previous_response_id', `Response with id '${id}' cannot be continued: '${chain.missingId}', earlier in its chain, was deleted or has expired.`);
  }
  const items: Json[] = [];
  for (const r of chain.responses) items.push(...(r.input as Json[]), ...(r.response.output as Json[]));
  return items;
}

const PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', reasoning: 'rs' };

/**
 * The input items as input_items lists them: each with an id and a type, a message's
 * string content as one text part, and a status.
 */
export function storedInput(input: Obj[]): Obj[] {
  return input.map((item) => {
    const type = (item.type as string | undefined) ?? 'message';
    const out: Obj = { id: typeof item.id === 'string' ? item.id : `${PREFIX[type] ?? 'item'}_${randomBytes(16).toString('hex')}`, ...item, type };
    if (type === 'message' && typeof item.content === 'string') out.content = [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }];
    if (out.status === undefined && type !== 'reasoning') out.status = 'completed';
    return out;
  });
}

/** Stores the finished response (a store: true request on a server with a store); durable when it resolves. */
export async function persist(ctx: AppContext, tenant: string, req: ResponsesRequest, response: StoredResponse['response'] & { id: string }): Promise<void> {
  const store = ctx.responseStore;
  if (!store || !req.store) return;
  try {
    await store.put({ id: response.id, tenant, model: req.model, previousId: req.previousResponseId, storedAt: 0, input: storedInput(req.input), response });
  } catch (err) {
    throw storeFailed(err);
  }
}
