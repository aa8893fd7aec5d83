// The router's busy thresholds, read and changed at run time.
//   GET  /busy_threshold   {"thresholds":[{model, active_decode_blocks_threshold, active_prefill_tokens_threshold}]}
//   POST /busy_threshold   {"model"?: NAME, "active_decode_blocks_threshold"?: 0..1 | null,
//                           "active_prefill_tokens_threshold"?: N | null} → that model's thresholds
// null clears a threshold. While every worker is past a threshold, requests wait in the
// router queue. Guarded like the admin API (src/http/access.ts). A change goes through the
// context's control plane, so every server shard applies it (control.ts).

import { ApiError } from '../protocol/errors.js';
import { baseModels, type AppContext } from './context.js';
import { localControl, thresholdView, unwrap } from './control.js';
import type { Exchange } from './exchange.js';
import { readJsonObject } from './json-body.js';

export function getBusyThresholds(ctx: AppContext) {
  return (ex: Exchange): void => {
    ex.sendJson(200, JSON.stringify({ thresholds: baseModels(ctx).map(thresholdView) }));
  };
}

function threshold(body: Record<string, unknown>, key: string, check: (n: number) => boolean, what: string): number | null | undefined {
  const v = body[key];
  if (v === undefined || v === null) return v;
  if (typeof v !== 'number' || !check(v)) throw ApiError.badRequest(`\`${key}\` must be ${what} or null`, key);
  return v;
}

export function setBusyThresholds(ctx: AppContext) {
  const control = ctx.control ?? localControl(ctx);
  return async (ex: Exchange): Promise<void> => {
    const b = readJsonObject(ex);
    if (b.model !== undefined && typeof b.model !== 'string') throw ApiError.badRequest('`model` must be a string', 'model');
    const decode = threshold(b, 'active_decode_blocks_threshold', (n) => n > 0 && n <= 1, 'a number in (0, 1]');
    const prefill = threshold(b, 'active_prefill_tokens_threshold', (n) => Number.isInteger(n) && n >= 0, 'a non-negative integer');
    const r = unwrap(await control.apply({ op: 'set-thresholds', model: b.model, activeDecodeBlocks: decode, activePrefillTokens: prefill }));
    ex.sendJson(r.status, r.body);
  };
}
