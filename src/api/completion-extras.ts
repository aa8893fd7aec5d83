// The response `nvext` of /v1/completions (nvext.extra_fields, spec 001 puts stop_reason
// there precisely because the completions schema has no place for it): which worker served
// each prompt's generation, the request's timing, and each choice's stop and token ids.
// Nothing is measured or kept unless a field was asked for.

import type { CompletionRequest } from '../protocol/completion-request.js';
import { nvextResponse, type ChoiceOutcome, type ServedBy, type Timing } from '../protocol/nvext-response.js';
import type { RunningGeneration } from '../pipeline/run.js';
import { servedBy } from './served-by.js';

export const NO_OUTCOME: ChoiceOutcome = Object.freeze({ matchedStop: null, tokenIds: null }) as ChoiceOutcome;

export class CompletionExtras {
  private readonly asked: boolean;
  private readonly timing: Timing;
  private readonly workers: ServedBy[];
  private firstDispatch = Infinity;

  constructor(
    private readonly req: CompletionRequest,
    arrived: number,
    prompts: number,
  ) {
    this.asked = req.nvext.extraFields.size > 0;
    this.timing = { arrived, dispatched: arrived, firstToken: null, lastToken: null };
    this.workers = [];
    for (let k = 0; k < prompts; k++) this.workers.push({ workerId: -1, dpRank: undefined });
  }

  /** Prompt k's generation left the router for its worker. */
  begin(k: number, g: RunningGeneration): void {
    if (!this.asked) return;
    this.workers[k] = servedBy(g, this.req.nvext);
    // Dispatch is when the first prompt's generation left the router's queue.
    this.firstDispatch = Math.min(this.firstDispatch, g.dispatchedAt);
  }

  noteTime(): void {
    if (!this.asked) return;
    const now = performance.now();
    this.timing.firstToken ??= now;
    this.timing.lastToken = now;
  }

  /** The response nvext (null when nothing was asked for); `outcomes` by returned choice index. */
  response(promptTokens: number, completionTokens: number, outcomes: ChoiceOutcome[]): Record<string, unknown> | null {
    if (!this.asked) return null;
    if (this.firstDispatch !== Infinity) this.timing.dispatched = this.firstDispatch;
    const worker = this.workers.length === 1 ? this.workers[0] : this.workers;
    return nvextResponse(this.req.nvext.extraFields, worker, this.timing, promptTokens, completionTokens, outcomes);
  }
}
