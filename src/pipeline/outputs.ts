// From the engine's token events to per-choice text events, independent of the API
// shape they will be written in. Each choice has its own native decoder; the stream
// ends when every choice has finished.

import { ApiError } from '../protocol/errors.js';
import type { Generation } from './generate.js';
import type { EngineEvent } from '../engine/types.js';
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

  private frozen: TokenCounts | null = null;

  get usage(): TokenCounts {
    return this.frozen ?? this.counts();
  }

  /** Keep the usage as of now (more events of the same engine message follow it). */
  freeze(): void {
    this.frozen = this.counts();
  }
}

/**
 * The output events of a generation. A plain iterator rather than an async generator: a
 * generator layer cost several promise jobs per event. The events one engine message makes
 * (text, a held tail, a finish, the end) are queued and handed out one per read; the next
 * engine message is read only once they are all out, so a text event's lazy usage and a
 * logprobs tap still see the state as of that event.
 */
export function decodeOutputs(model: ServedModel, gen: Generation, opts: OutputOptions): AsyncIterableIterator<OutputEvent> {
  return new DecodedOutputs(model, gen, opts);
}

class DecodedOutputs implements AsyncIterableIterator<OutputEvent> {
  private readonly decoders: ChoiceDecoder[] = [];
  private readonly ids: number[][] | null;
  private readonly finished: boolean[];
  private remaining: number;
  private promptTokens = 0;
  private cachedTokens = 0;
  private readonly counts = (): TokenCounts => ({
    promptTokens: this.promptTokens,
    completionTokens: this.decoders.reduce((s, x) => s + (x?.completionTokens ?? 0), 0),
    cachedTokens: this.cachedTokens,
  });
  private last = -1;
  // Whether every choice that Portico ended before the engine did ended on a rule the engine
  // applies too: the token limit (it gets the same max_new_tokens), or a stop token (it gets
  // stop_token_ids and ignore_eos, and knows the model's EOS). Stop strings are Portico's alone.
  private engineEndsItself = true;
  private it: AsyncIterator<EngineEvent> | null = null;
  // The engine stream is open and not failing: leaving must either abort it or read it out.
  private open = false;
  /** Events made from the last engine message, not handed out yet. */
  private readonly out: OutputEvent[] = [];
  private outHead = 0;
  /** The end event is queued: the next read after it settles the engine stream. */
  private ending = false;
  private closed = false;

  constructor(
    private readonly model: ServedModel,
    private readonly gen: Generation,
    private readonly opts: OutputOptions,
  ) {
    this.ids = opts.collectTokenIds ? Array.from({ length: opts.n }, () => []) : null;
    this.finished = new Array<boolean>(opts.n).fill(false);
    this.remaining = opts.n;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private decoder(i: number): ChoiceDecoder {
    if (i < 0 || i >= this.opts.n) throw new ApiError(502, `the engine sent output for choice ${i} of ${this.opts.n}`, { code: 'engine_error' });
    return (this.decoders[i] ??= new ChoiceDecoder(this.model, this.opts));
  }

  // Flush a choice's held text (returned, or null) and mark it ended; then its finish event.
  private closeTail(index: number): TextOutput | null {
    const tail = this.decoder(index).finish();
    this.finished[index] = true;
    this.remaining--;
    return tail ? new TextOutput(index, tail, NO_IDS, this.counts) : null;
  }

  private finishEvent(index: number, reason: FinishReason, matchedStop: string | number | null): OutputEvent {
    return {
      kind: 'finish',
      index,
      reason,
      completionTokens: this.decoder(index).completionTokens,
      matchedStop,
      usage: this.counts(),
      tokenIds: this.ids ? this.ids[index] : null,
    };
  }

  private end(): OutputEvent {
    const usage = this.counts();
    const stats = this.model.stats;
    stats.outputTokens.observe(usage.completionTokens);
    stats.cachedTokens.observe(usage.cachedTokens);
    return { kind: 'end', usage };
  }

  /** A choice is over: its held tail, its finish, and the end once every choice is. */
  private over(index: number, reason: FinishReason, matchedStop: string | number | null): void {
    const out = this.out;
    // A text event queued before this one keeps the usage as of itself.
    const prev = out.length > 0 ? out[out.length - 1] : undefined;
    if (prev instanceof TextOutput) prev.freeze();
    const tail = this.closeTail(index);
    if (tail) {
      out.push(tail);
      tail.freeze();
    }
    out.push(this.finishEvent(index, reason, matchedStop));
    if (this.remaining === 0) {
      out.push(this.end());
      this.ending = true;
    }
  }

  private take(): IteratorResult<OutputEvent> {
    const value = this.out[this.outHead]!;
    this.out[this.outHead++] = undefined as unknown as OutputEvent;
    if (this.outHead === this.out.length) {
      this.out.length = 0;
      this.outHead = 0;
    }
    return { value, done: false };
  }

  async next(): Promise<IteratorResult<OutputEvent>> {
    if (this.outHead < this.out.length) return this.take();
    if (this.closed) return DONE;
    if (this.ending) {
      await this.settle();
      return DONE;
    }
    const it = (this.it ??= this.gen.events[Symbol.asyncIterator]());
    const opts = this.opts;
    const stats = this.model.stats;
    try {
      for (;;) {
        this.open = false;
        const step = await it.next();
        if (step.done) break;
        this.open = true;
        const ev = step.value;
        const now = performance.now();
        const fresh = ev.kind === 'chunk' ? ev.chunk.tokenIds.length : ev.done.outputIds.length;
        if (fresh > 0) {
          if (this.last < 0) {
            if (opts.arrived !== undefined) stats.ttft.observe((now - opts.arrived) / 1000);
          } else {
            const perToken = (now - this.last) / 1000 / fresh;
            for (let k = 0; k < fresh; k++) stats.itl.observe(perToken);
          }
          this.last = now;
        }
        if (ev.kind === 'chunk') {
          const c = ev.chunk;
          this.promptTokens = c.promptTokens;
          this.cachedTokens = Math.max(this.cachedTokens, c.cachedTokens);
          const dec = this.decoder(c.index);
          if (this.finished[c.index]) continue; // a stop already ended this choice here
          const text = dec.push(c.tokenIds);
          if (this.ids) this.ids[c.index].push(...c.tokenIds);
          if (!dec.finished) {
            if (text) return { value: new TextOutput(c.index, text, c.tokenIds, this.counts), done: false };
            continue;
          }
          if (text) this.out.push(new TextOutput(c.index, text, c.tokenIds, this.counts));
          // A stop string, stop token or the token limit ended the choice before the engine
          // did: finish it now; once every choice is over, the read after the end aborts the
          // request unless the engine is about to end it too (see settle()).
          this.engineEndsItself &&= enforcedByEngine(dec);
          this.over(c.index, dec.finishReason ?? 'stop', dec.matchedStop);
          return this.take();
        }
        const d = ev.done;
        this.promptTokens = d.promptTokens;
        this.cachedTokens = Math.max(this.cachedTokens, d.cachedTokens);
        if (this.finished[d.index]) continue;
        const dec = this.decoder(d.index);
        if (d.outputIds.length > 0) {
          if (this.ids) this.ids[d.index].push(...d.outputIds);
          const text = dec.push(d.outputIds);
          if (text) this.out.push(new TextOutput(d.index, text, d.outputIds, this.counts));
        }
        this.over(d.index, dec.finishReason ?? finishReasonOf(d.finishReason), dec.matchedStop ?? d.matchedStopStr ?? null);
        return this.take();
      }
    } catch (err) {
      await this.settle();
      throw err;
    }
    this.closed = true;
    throw new ApiError(502, 'the engine ended the stream before every choice finished', { code: 'engine_error' });
  }

  async return(): Promise<IteratorResult<OutputEvent>> {
    this.out.length = 0;
    this.outHead = 0;
    await this.settle();
    return DONE;
  }

  // Every choice is answered, or the consumer stopped reading. When the engine ends the
  // request by itself right after (max_tokens, a stop token), read the rest of its stream
  // in the background: aborting would cost an Abort rpc and a stream reset per request
  // (the usual case for short max_tokens). Otherwise abort it.
  private async settle(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.open) return;
    this.open = false;
    const it = this.it!;
    if (this.remaining === 0 && this.engineEndsItself) drain(it);
    else await it.return?.();
  }
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
const DONE: IteratorResult<OutputEvent> = Object.freeze({ value: undefined, done: true }) as IteratorResult<OutputEvent>;
