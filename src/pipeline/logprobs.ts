// Per-token log-probabilities, taken off the engine's token events on their way to the
// decoder. The writers drain a choice's pending entries whenever they emit something for
// that choice, so each streamed delta carries the logprobs of the tokens that produced
// it (text held back by the stop jail or a parser travels with the later delta, or with
// the finish). Generators are lazy: when a writer sees an event, the tap has seen exactly
// the engine events that led to it.

import type { EngineEvent, TokenLogprobs } from '../engine/types.js';
import type { Generation } from './generate.js';
import type { TokenLogprob } from '../protocol/token-logprob.js';

export type { TokenLogprob };

export interface LogprobTap {
  /** The generation to decode: same events, logprobs recorded. */
  readonly gen: Generation;
  /** Entries of choice `index` not yet written; clears them. */
  take(index: number): TokenLogprob[];
  /**
   * The prompt's entries for choice `index` (prompt logprobs asked for), once: `ids` are
   * the prompt token ids; the first entry's logprob is NaN (nothing precedes it).
   */
  takePrompt(index: number, ids: ArrayLike<number>): TokenLogprob[] | null;
}

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

export function tapLogprobs(gen: Generation): LogprobTap {
  const pending: TokenLogprob[][] = [];
  const prompt: (TokenLogprobs | null)[] = [];
  const at = (i: number) => (pending[i] ??= []);
  async function* events(): AsyncGenerator<EngineEvent> {
    for await (const ev of gen.events) {
      if (ev.kind === 'chunk' && ev.chunk.promptLogprobs && prompt[ev.chunk.index] === undefined) prompt[ev.chunk.index] = ev.chunk.promptLogprobs;
      if (ev.kind === 'chunk') entries(ev.chunk.tokenIds, ev.chunk.logprobs, at(ev.chunk.index));
      else if (ev.done.outputIds.length > 0) entries(ev.done.outputIds, ev.done.logprobs, at(ev.done.index));
      yield ev;
    }
  }
  const tapped: Generation = {
    get worker() {
      return gen.worker;
    },
    get dispatchedAt() {
      return gen.dispatchedAt;
    },
    get overlapBlocks() {
      return gen.overlapBlocks;
    },
    events: events(),
  };
  return {
    gen: tapped,
    take(index) {
      const p = pending[index];
      if (!p || p.length === 0) return [];
      pending[index] = [];
      return p;
    },
    takePrompt(index, ids) {
      const lp = prompt[index];
      if (!lp) return null;
      prompt[index] = null;
      const out: TokenLogprob[] = [];
      entries(Array.from(ids).slice(-lp.logprobs.length), lp, out);
      return out;
    },
  };
}
