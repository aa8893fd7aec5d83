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

/** The worker that served a generation (and its data-parallel rank, when known). */
export interface ServedBy {
  workerId: number;
  dpRank: number | undefined;
  /** Disaggregated serving: the prefill leg's worker and rank. */
  prefillWorkerId?: number;
  prefillDpRank?: number;
}

/**
 * `worker` is one worker (chat, a single-prompt completion) or, for a completion of several
 * prompts, one per prompt: `worker_id` is then a list `{prompt_index, decode_worker_id, ...}`.
 * `stop_reason` and `completion_token_ids` are one value for a single choice (Dynamo's shape)
 * and otherwise an indexed list `[{index, stop_reason}]` / `[{index, token_ids}]`, by choice index.
 */
export function nvextResponse(
  fields: ReadonlySet<ExtraField>,
  worker: ServedBy | ServedBy[],
  t: Timing,
  promptTokens: number,
  completionTokens: number,
  choices: ChoiceOutcome[],
): Record<string, unknown> | null {
  if (fields.size === 0) return null;
  const out: Record<string, unknown> = {};
  if (fields.has('worker_id')) out.worker_id = Array.isArray(worker) ? worker.map((w, i) => ({ prompt_index: i, ...workerId(w) })) : workerId(worker);
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
  if (fields.has('stop_reason')) out.stop_reason = choices.length === 1 ? choices[0].matchedStop : choices.map((c, index) => ({ index, stop_reason: c.matchedStop }));
  if (fields.has('completion_token_ids')) out.completion_token_ids = choices.length === 1 ? choices[0].tokenIds : choices.map((c, index) => ({ index, token_ids: c.tokenIds }));
  return out;
}

function workerId(w: ServedBy): Record<string, number> {
  const out: Record<string, number> = {};
  if (w.prefillWorkerId !== undefined) {
    out.prefill_worker_id = w.prefillWorkerId;
    if (w.prefillDpRank !== undefined) out.prefill_dp_rank = w.prefillDpRank;
  }
  out.decode_worker_id = w.workerId;
  if (w.dpRank !== undefined) out.decode_dp_rank = w.dpRank;
  return out;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
