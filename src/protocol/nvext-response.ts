// The response `nvext` object a client asks for with nvext.extra_fields: which worker
// served the request, timing, the stop that ended each choice, and the generated
// token ids. Built only when asked for; nothing is measured otherwise.

import type { ExtraField } from './nvext.js';

export interface Timing {
  /** Request arrival, dispatch to the worker, first and last engine output (ms, monotonic). */
  arrived: number;
  dispatched: number;
  firstToken: number | null;
  lastToken: number | null;
}

export interface ChoiceOutcome {
  matchedStop: string | number | null;
  tokenIds: number[] | null;
}

export function nvextResponse(
  fields: ReadonlySet<ExtraField>,
  workerId: number,
  dpRank: number | undefined,
  t: Timing,
  promptTokens: number,
  completionTokens: number,
  choices: ChoiceOutcome[],
): Record<string, unknown> | null {
  if (fields.size === 0) return null;
  const out: Record<string, unknown> = {};
  if (fields.has('worker_id')) out.worker_id = { decode_worker_id: workerId, ...(dpRank !== undefined ? { decode_dp_rank: dpRank } : {}) };
  if (fields.has('timing')) {
    const end = t.lastToken ?? performance.now();
    const ttft = t.firstToken === null ? null : round(t.firstToken - t.arrived);
    const decodeTokens = Math.max(completionTokens - 1, 0);
    out.timing = {
      queue_ms: round(t.dispatched - t.arrived),
      ttft_ms: ttft,
      itl_ms: t.firstToken !== null && decodeTokens > 0 ? round((end - t.firstToken) / decodeTokens) : null,
      total_ms: round(end - t.arrived),
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
    };
  }
  if (fields.has('stop_reason')) out.stop_reason = choices.length === 1 ? choices[0].matchedStop : choices.map((c) => c.matchedStop);
  if (fields.has('completion_token_ids')) out.completion_token_ids = choices.length === 1 ? choices[0].tokenIds : choices.map((c) => c.tokenIds);
  return out;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
