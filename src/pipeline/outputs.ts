// From the engine's token events to per-choice text events, independent of the API
// shape they will be written in. Each choice has its own native decoder; the stream
// ends when every choice has finished.

import { ApiError } from '../protocol/errors.js';
import type { Generation } from './generate.js';
import { ChoiceDecoder, finishReasonOf, type FinishReason } from './postprocess.js';
import type { ServedModel } from './served-model.js';

export interface OutputOptions {
  /** Number of choices the engine generates for this prompt. */
  n: number;
  skipSpecialTokens: boolean;
  /** Keep each choice's generated token ids and report them on its finish event. */
  collectTokenIds?: boolean;
  /** When the request arrived (performance.now()), for time-to-first-token. */
  arrived?: number;
}

export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export type OutputEvent =
  | { kind: 'text'; index: number; text: string; tokenIds: readonly number[]; usage: TokenCounts }
  | { kind: 'finish'; index: number; reason: FinishReason; completionTokens: number; matchedStop: string | number | null; usage: TokenCounts; tokenIds: number[] | null }
  | { kind: 'end'; usage: TokenCounts };

export async function* decodeOutputs(model: ServedModel, gen: Generation, opts: OutputOptions): AsyncGenerator<OutputEvent> {
  const decoders: ChoiceDecoder[] = [];
  const ids: number[][] | null = opts.collectTokenIds ? Array.from({ length: opts.n }, () => []) : null;
  const finished = new Array<boolean>(opts.n).fill(false);
  let remaining = opts.n;
  let promptTokens = 0;
  let cachedTokens = 0;
  const counts = (): TokenCounts => ({
    promptTokens,
    completionTokens: decoders.reduce((s, x) => s + (x?.completionTokens ?? 0), 0),
    cachedTokens,
  });
  const decoder = (i: number): ChoiceDecoder => {
    if (i < 0 || i >= opts.n) throw new ApiError(502, `the engine sent output for choice ${i} of ${opts.n}`, { code: 'engine_error' });
    return (decoders[i] ??= new ChoiceDecoder(model, opts.skipSpecialTokens));
  };

  const stats = model.stats;
  let last = -1;
  for await (const ev of gen.events) {
    const now = performance.now();
    const fresh = ev.kind === 'chunk' ? ev.chunk.tokenIds.length : ev.done.outputIds.length;
    if (fresh > 0) {
      if (last < 0) {
        if (opts.arrived !== undefined) stats.ttft.observe((now - opts.arrived) / 1000);
      } else {
        const perToken = (now - last) / 1000 / fresh;
        for (let k = 0; k < fresh; k++) stats.itl.observe(perToken);
      }
      last = now;
    }
    if (ev.kind === 'chunk') {
      const c = ev.chunk;
      const text = decoder(c.index).push(c.tokenIds);
      if (ids) ids[c.index].push(...c.tokenIds);
      promptTokens = c.promptTokens;
      cachedTokens = Math.max(cachedTokens, c.cachedTokens);
      if (text) yield { kind: 'text', index: c.index, text, tokenIds: c.tokenIds, usage: counts() };
      continue;
    }
    const d = ev.done;
    const dec = decoder(d.index);
    if (d.outputIds.length > 0) {
      if (ids) ids[d.index].push(...d.outputIds);
      const text = dec.push(d.outputIds);
      if (text) yield { kind: 'text', index: d.index, text, tokenIds: d.outputIds, usage: counts() };
    }
    const tail = dec.finish();
    if (tail) yield { kind: 'text', index: d.index, text: tail, tokenIds: [], usage: counts() };
    promptTokens = d.promptTokens;
    cachedTokens = Math.max(cachedTokens, d.cachedTokens);
    if (!finished[d.index]) {
      finished[d.index] = true;
      remaining--;
    }
    const matchedStop = d.matchedStopStr ?? d.matchedTokenId ?? null;
    yield { kind: 'finish', index: d.index, reason: finishReasonOf(d.finishReason), completionTokens: dec.completionTokens, matchedStop, usage: counts(), tokenIds: ids ? ids[d.index] : null };
    if (remaining === 0) {
      const usage = counts();
      stats.outputTokens.observe(usage.completionTokens);
      stats.cachedTokens.observe(usage.cachedTokens);
      yield { kind: 'end', usage };
      return;
    }
  }
  throw new ApiError(502, 'the engine ended the stream before every choice finished', { code: 'engine_error' });
}
