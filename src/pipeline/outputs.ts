// From the engine's token events to per-choice text events, independent of the API
// shape they will be written in. Each choice has its own native decoder; the stream
// ends when every choice has finished.

import { ApiError } from '../protocol/errors.js';
import type { Generation } from './generate.js';
import { ChoiceDecoder, finishReasonOf, type FinishReason, type OutputRules } from './postprocess.js';
import type { ServedModel } from './served-model.js';
import type { SamplingOptions } from '../protocol/sampling.js';

export interface OutputOptions extends OutputRules {
  /** Number of choices the engine generates for this prompt. */
  n: number;
  /** Keep each choice's generated token ids and report them on its finish event. */
  collectTokenIds?: boolean;
  /** When the request arrived (performance.now()), for time-to-first-token. */
  arrived?: number;
}

/** The output rules a request's sampling options imply, with its final token budget. */
export function outputRules(s: SamplingOptions, maxTokens: number | undefined): Omit<OutputRules, 'skipSpecialTokens'> {
  return { stop: s.stop, stopTokenIds: s.stopTokenIds, includeStopStrInOutput: s.includeStopStrInOutput, minTokens: s.minTokens, ignoreEos: s.ignoreEos, maxTokens };
}

export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export type OutputEvent =
  | { kind: 'text'; index: number; text: string; tokenIds: readonly number[]; readonly usage: TokenCounts }
  | { kind: 'finish'; index: number; reason: FinishReason; completionTokens: number; matchedStop: string | number | null; usage: TokenCounts; tokenIds: number[] | null }
  | { kind: 'end'; usage: TokenCounts };

/**
 * A text event. Its usage (a native call per choice) is computed only when read: most
 * requests never ask for it (only stream_options.continuous_usage_stats does). Read before
 * the next event is pulled, it is the usage as of this event, as the generator is paused.
 */
class TextOutput {
  readonly kind = 'text' as const;
  constructor(
    readonly index: number,
    readonly text: string,
    readonly tokenIds: readonly number[],
    private readonly counts: () => TokenCounts,
  ) {}

  get usage(): TokenCounts {
    return this.counts();
  }
}

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
    return (decoders[i] ??= new ChoiceDecoder(model, opts));
  };

  const stats = model.stats;
  let last = -1;

  // Flush a choice's held text (returned, or null) and mark it ended; then its finish event.
  // (Plain functions, not a nested async generator: that cost a generator and promises per choice.)
  const closeTail = (index: number): TextOutput | null => {
    const tail = decoder(index).finish();
    finished[index] = true;
    remaining--;
    return tail ? new TextOutput(index, tail, NO_IDS, counts) : null;
  };
  const finishEvent = (index: number, reason: FinishReason, matchedStop: string | number | null): OutputEvent => ({
    kind: 'finish',
    index,
    reason,
    completionTokens: decoder(index).completionTokens,
    matchedStop,
    usage: counts(),
    tokenIds: ids ? ids[index] : null,
  });

  const end = (): OutputEvent => {
    const usage = counts();
    stats.outputTokens.observe(usage.completionTokens);
    stats.cachedTokens.observe(usage.cachedTokens);
    return { kind: 'end', usage };
  };
  // Whether every choice that Portico ended before the engine did ended on a rule the engine
  // applies too: the token limit (it gets the same max_new_tokens), or a stop token (it gets
  // stop_token_ids and ignore_eos, and knows the model's EOS). Stop strings are Portico's alone.
  let engineEndsItself = true;
  const it = gen.events[Symbol.asyncIterator]();
  // The engine stream is open and not failing: leaving must either abort it or read it out.
  let open = false;
  try {
    for (;;) {
      open = false;
      const step = await it.next();
      if (step.done) break;
      open = true;
      const ev = step.value;
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
        promptTokens = c.promptTokens;
        cachedTokens = Math.max(cachedTokens, c.cachedTokens);
        const dec = decoder(c.index);
        if (finished[c.index]) continue; // a stop already ended this choice here
        const text = dec.push(c.tokenIds);
        if (ids) ids[c.index].push(...c.tokenIds);
        if (text) yield new TextOutput(c.index, text, c.tokenIds, counts);
        if (!dec.finished) continue;
        // A stop string, stop token or the token limit ended the choice before the engine
        // did: finish it now; once every choice is over, leaving the loop aborts the request
        // unless the engine is about to end it too (see the finally below).
        engineEndsItself &&= enforcedByEngine(dec);
        const reason = dec.finishReason ?? 'stop';
        const matchedStop = dec.matchedStop;
        const tail = closeTail(c.index);
        if (tail) yield tail;
        yield finishEvent(c.index, reason, matchedStop);
        if (remaining === 0) {
          yield end();
          return;
        }
        continue;
      }
      const d = ev.done;
      promptTokens = d.promptTokens;
      cachedTokens = Math.max(cachedTokens, d.cachedTokens);
      if (finished[d.index]) continue;
      const dec = decoder(d.index);
      if (d.outputIds.length > 0) {
        if (ids) ids[d.index].push(...d.outputIds);
        const text = dec.push(d.outputIds);
        if (text) yield new TextOutput(d.index, text, d.outputIds, counts);
      }
      const reason = dec.finishReason ?? finishReasonOf(d.finishReason);
      const matchedStop = dec.matchedStop ?? d.matchedStopStr ?? null;
      const tail = closeTail(d.index);
      if (tail) yield tail;
      yield finishEvent(d.index, reason, matchedStop);
      if (remaining === 0) {
        yield end();
        return;
      }
    }
  } finally {
    // Every choice is answered, or the consumer stopped reading. When the engine ends the
    // request by itself right after (max_tokens, a stop token), read the rest of its stream
    // in the background: aborting would cost an Abort rpc and a stream reset per request
    // (the usual case for short max_tokens). Otherwise abort it.
    if (open) {
      if (remaining === 0 && engineEndsItself) drain(it);
      else await it.return?.();
    }
  }
  throw new ApiError(502, 'the engine ended the stream before every choice finished', { code: 'engine_error' });
}

/** Whether a choice Portico ended ended on a rule the engine applies too (see decodeOutputs). */
function enforcedByEngine(dec: ChoiceDecoder): boolean {
  // (matchedStop: a number for a stop token id, null for EOS, a string for a stop string.)
  return dec.finishReason === 'length' || typeof dec.matchedStop !== 'string';
}

/**
 * Events an engine may still send after Portico ended every choice on a rule the engine
 * applies too (its final message, or a few tokens if it saw the stop differently) before
 * the request is aborted after all.
 */
const DRAIN_EVENTS = 4;

/** Read an engine stream that is ending by itself to its end, discarding what comes. */
function drain(it: AsyncIterator<unknown>): void {
  void (async () => {
    try {
      for (let k = 0; k < DRAIN_EVENTS; k++) if ((await it.next()).done) return;
      // Still going (an engine that does not stop where Portico did): abort it.
      await it.return?.();
    } catch {
      // Its outcome no longer reaches anyone; engine failures are handled where they occur.
    }
  })();
}

const NO_IDS: readonly number[] = Object.freeze([]);
