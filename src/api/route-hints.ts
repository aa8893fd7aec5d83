// The routing inputs of a generation request, the same for every endpoint (chat,
// completions, responses, messages): worker and data-parallel rank overrides (nvext
// or their headers, already merged by readNvext), the X-Dynamo-Session-ID header for
// session affinity, the cache salt and the agent hints. Also the refusal of the nvext
// fields an endpoint does not implement, so none is silently dropped.

import { ApiError } from '../protocol/errors.js';
import type { NvExt } from '../protocol/nvext.js';
import type { RouteHints } from '../router/types.js';

export function routeHints(nv: NvExt, header: (name: string) => string): RouteHints {
  const hints = nv.agentHints;
  return {
    workerId: nv.backendInstanceId ?? nv.decodeWorkerId,
    dpRank: nv.dpRank,
    prefillWorkerId: nv.prefillWorkerId,
    prefillDpRank: nv.prefillDpRank,
    prefillPinnedInBody: nv.prefillWorkerId !== undefined || nv.prefillDpRank !== undefined,
    prefillHeaders: nv.prefillHeaders,
    sessionId: header('x-dynamo-session-id') || undefined,
    cacheSalt: nv.cacheSalt,
    priority: hints.priority,
    strictPriority: hints.strictPriority,
    osl: hints.osl,
  };
}

/** nvext fields outside routing that only some endpoints implement. */
export type NvextFeature = 'extra_fields' | 'annotations' | 'token_data' | 'use_raw_prompt' | 'greed_sampling' | 'speculative_prefill';

/** A 400 for the first nvext field in `refused` that the request uses. */
export function refuseNvext(n: NvExt, endpoint: string, refused: readonly NvextFeature[]): void {
  const used: Record<NvextFeature, boolean> = {
    extra_fields: n.extraFields.size > 0,
    annotations: n.annotations.length > 0,
    token_data: n.tokenData !== undefined,
    use_raw_prompt: n.useRawPrompt,
    greed_sampling: n.greedSampling,
    speculative_prefill: n.agentHints.speculativePrefill,
  };
  const first = refused.find((f) => used[f]);
  if (first) {
    const name = first === 'speculative_prefill' ? 'agent_hints.speculative_prefill' : first;
    throw new ApiError(400, `\`nvext.${name}\` is not supported on ${endpoint} yet`, { param: `nvext.${name}`, code: 'unsupported_parameter' });
  }
}
