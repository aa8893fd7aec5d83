// The router's busy thresholds, read and changed at run time.
//   GET  /busy_threshold   {"thresholds":[{model, active_decode_blocks_threshold, active_prefill_tokens_threshold}]}
//   POST /busy_threshold   {"model"?: NAME, "active_decode_blocks_threshold"?: 0..1 | null,
//                           "active_prefill_tokens_threshold"?: N | null} → that model's thresholds
// null clears a threshold. While every worker is past a threshold, requests wait in the
// router queue. Protected by --api-key like the API itself.

import { ApiError } from '../protocol/errors.js';
import { ModelRouter } from '../router/router.js';
import { routerFor } from '../router/registry.js';
import type { ServedModel } from '../pipeline/served-model.js';
import type { AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { modelNamed, readJsonObject } from './json-body.js';

function routerOf(m: ServedModel): ModelRouter {
  const r = routerFor(m.pool);
  if (!(r instanceof ModelRouter)) throw ApiError.unavailable(`the router of \`${m.name}\` has no busy thresholds`);
  return r;
}

function view(m: ServedModel) {
  const t = routerOf(m).thresholds;
  return { model: m.name, active_decode_blocks_threshold: t.activeDecodeBlocks ?? null, active_prefill_tokens_threshold: t.activePrefillTokens ?? null };
}

export function getBusyThresholds(ctx: AppContext) {
  return (ex: Exchange): void => {
    ex.sendJson(200, JSON.stringify({ thresholds: [...ctx.models.values()].map(view) }));
  };
}

function threshold(body: Record<string, unknown>, key: string, check: (n: number) => boolean, what: string): number | null | undefined {
  const v = body[key];
  if (v === undefined || v === null) return v;
  if (typeof v !== 'number' || !check(v)) throw ApiError.badRequest(`\`${key}\` must be ${what} or null`, key);
  return v;
}

export function setBusyThresholds(ctx: AppContext) {
  return (ex: Exchange): void => {
    const b = readJsonObject(ex);
    const model = modelNamed(ctx, b.model);
    const decode = threshold(b, 'active_decode_blocks_threshold', (n) => n > 0 && n <= 1, 'a number in (0, 1]');
    const prefill = threshold(b, 'active_prefill_tokens_threshold', (n) => Number.isInteger(n) && n >= 0, 'a non-negative integer');
    routerOf(model).setThresholds({ activeDecodeBlocks: decode, activePrefillTokens: prefill });
    ex.sendJson(200, JSON.stringify(view(model)));
  };
}
