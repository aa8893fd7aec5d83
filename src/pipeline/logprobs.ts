// Per-token log-probabilities, recorded off the engine's token events by the one loop
// (run.ts) before they are decoded. The writers drain a choice's pending entries whenever
// they emit something for that choice, so each streamed delta carries the logprobs of the
// tokens that produced it (text held back by the stop jail or a parser travels with the
// later delta, or with the finish).

import type { EngineEvent, TokenLogprobs } from '../engine/types.js';
import type { TokenLogprob } from '../protocol/token-logprob.js';

export type { TokenLogprob };

function entries(ids: readonly number[], lp: TokenLogprobs | undefined, into: TokenLogprob[]): void {
  for (let i = 0; i < ids.length; i++) {
    const t = lp?.top?.[i];
    into.push({
      id: ids[i],
      logprob: lp?.logprobs[i] ?? -9999,
      top: t ? t.tokenIds.map((id, k) => ({ id, logprob: t.logprobs[k] })) : [],
    });
  }
}

/**
 * The logprobs of one generation's choices, recorded from its engine events (record) before
 * they are decoded, and taken by the writers (take, takePrompt).
 */
export class LogprobBook {
  private readonly pending: TokenLogprob[][] = [];
  private readonly prompt: (TokenLogprobs | null)[] = [];

  record(ev: EngineEvent): void {
    if (ev.kind === 'chunk') {
      const c = ev.chunk;
      if (c.promptLogprobs && this.prompt[c.index] === undefined) this.prompt[c.index] = c.promptLogprobs;
      entries(c.tokenIds, c.logprobs, (this.pending[c.index] ??= []));
    } else if (ev.done.outputIds.length > 0) entries(ev.done.outputIds, ev.done.logprobs, (this.pending[ev.done.index] ??= []));
  }

  /** Entries of choice `index` not yet written; clears them. */
  take(index: number): TokenLogprob[] {
    const p = this.pending[index];
    if (!p || p.length === 0) return [];
    this.pending[index] = [];
    return p;
  }

  /**
   * The prompt's entries for choice `index` (prompt logprobs asked for), once: `ids` are
   * the prompt token ids; the first entry's logprob is NaN (nothing precedes it).
   */
  takePrompt(index: number, ids: ArrayLike<number>): TokenLogprob[] | null {
    const lp = this.prompt[index];
    if (!lp) return null;
    this.prompt[index] = null;
    const out: TokenLogprob[] = [];
    entries(Array.from(ids).slice(-lp.logprobs.length), lp, out);
    return out;
  }
}
