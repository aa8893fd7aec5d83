// From the engine's token events to per-choice output events (content, reasoning, tool
// calls, finish), independent of the API shape they will be written in. Each choice has
// one native ChoiceOutput (detokenizer, stop jail, parsers: postprocess.ts), pushed once
// per engine message; the stream ends when every choice has finished.

import { ApiError } from '../protocol/errors.js';
import type { EngineEvent } from '../engine/types.js';
import { ChoiceDecoder, finishReasonOf, type FinishReason } from './postprocess.js';
import type { ServedModel } from './served-model.js';
import type { OutputOptions } from './request.js';

export type { OutputOptions } from './request.js';

export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export type OutputEvent =
  | { kind: 'text'; index: number; text: string; tokenIds: readonly number[]; readonly usage: TokenCounts }
  | { kind: 'finish'; index: number; reason: FinishReason; completionTokens: number; matchedStop: string | number | null; usage: TokenCounts; tokenIds: number[] | null }
  | { kind: 'end'; usage: TokenCounts };

/** The output events of a request whose text is parsed (OutputOptions.parsing). */
export type ParsedEvent =
  | OutputEvent
  | { kind: 'reasoning'; index: number; text: string; usage: TokenCounts }
  | { kind: 'tool_start'; index: number; call: number; id: string; name: string; usage: TokenCounts }
  | { kind: 'tool_args'; index: number; call: number; text: string; usage: TokenCounts };

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
    private readonly outputs: ChoiceOutputs,
  ) {}

  private frozen: TokenCounts | null = null;

  get usage(): TokenCounts {
    return this.frozen ?? this.outputs.counts();
  }

  /** Keep the usage as of now (more events of the same engine message follow it). */
  freeze(): void {
    this.frozen = this.outputs.counts();
  }
}

/**
 * The choices of one generation, decoded: one native ChoiceDecoder per choice, pushed once
 * per engine message. `push` makes the output events of one engine message; it is the
 * decoding step of runGeneration (run.ts).
 */
export class ChoiceOutputs {
  private readonly decoders: ChoiceDecoder[] = [];
  private readonly ids: number[][] | null;
  private readonly finished: boolean[];
  /** Choices not over yet. */
  remaining: number;
  private promptTokens = 0;
  private cachedTokens = 0;
  private last = -1;
  /**
   * Whether every choice that Portico ended before the engine did ended on a rule the engine
   * applies too: the token limit (it gets the same max_new_tokens), or a stop token (it gets
   * stop_token_ids and ignore_eos, and knows the model's EOS). Stop strings are Portico's alone.
   */
  engineEndsItself = true;

  constructor(
    private readonly model: ServedModel,
    private readonly opts: OutputOptions,
  ) {
    this.ids = opts.collectTokenIds ? Array.from({ length: opts.n }, () => []) : null;
    // (Assigned in a loop: fill() is a runtime call, and push() would grow a 16-slot store.)
    const finished: boolean[] = (this.finished = new Array<boolean>(opts.n));
    for (let i = 0; i < opts.n; i++) finished[i] = false;
    this.remaining = opts.n;
  }

  /** The usage as of now. */
  counts(): TokenCounts {
    let completionTokens = 0;
    const decoders = this.decoders;
    for (let i = 0; i < decoders.length; i++) completionTokens += decoders[i]?.completionTokens ?? 0;
    return { promptTokens: this.promptTokens, completionTokens, cachedTokens: this.cachedTokens };
  }

  /** The ids choice `index` generated so far (opts.collectTokenIds), else none. */
  generated(index: number): readonly number[] {
    return this.ids?.[index] ?? NO_IDS;
  }

  private decoder(i: number): ChoiceDecoder {
    if (i < 0 || i >= this.opts.n) throw new ApiError(502, `the engine sent output for choice ${i} of ${this.opts.n}`, { code: 'engine_error' });
    return (this.decoders[i] ??= new ChoiceDecoder(this.model, this.opts, this.opts.parsing ?? null));
  }

  /**
   * The events of one push's deltas (the native flat array `[over, kind, ...fields]`),
   * queued; the first text event carries the message's ids. A text event queued here keeps
   * the usage as of now (the consumer reads it after later events of the message were made).
   */
  private queueDeltas(out: ParsedEvent[], index: number, flat: (string | number)[], ids: readonly number[]): void {
    // The usage as of this message (the same for every event it makes).
    let usage: TokenCounts | null = null;
    for (let i = 1; i < flat.length; ) {
      switch (flat[i]) {
        case 0: {
          const text = flat[i + 1] as string;
          if (text) {
            const t = new TextOutput(index, text, ids, this);
            t.freeze();
            out.push(t);
            ids = NO_IDS;
          }
          i += 2;
          break;
        }
        case 1:
          if (flat[i + 1]) out.push({ kind: 'reasoning', index, text: flat[i + 1] as string, usage: (usage ??= this.counts()) });
          i += 2;
          break;
        case 2:
          out.push({ kind: 'tool_start', index, call: flat[i + 1] as number, id: flat[i + 2] as string, name: flat[i + 3] as string, usage: (usage ??= this.counts()) });
          i += 4;
          break;
        default:
          out.push({ kind: 'tool_args', index, call: flat[i + 1] as number, text: flat[i + 2] as string, usage: (usage ??= this.counts()) });
          i += 3;
          break;
      }
    }
  }

  private finishEvent(index: number, reason: FinishReason, matchedStop: string | number | null): ParsedEvent {
    const dec = this.decoder(index);
    // A choice that made tool calls finishes with tool_calls (unless it ran out of tokens).
    if (dec.toolCallCount > 0 && reason !== 'length') reason = 'tool_calls';
    return {
      kind: 'finish',
      index,
      reason,
      completionTokens: dec.completionTokens,
      matchedStop,
      usage: this.counts(),
      tokenIds: this.ids ? this.ids[index] : null,
    };
  }

  private end(): ParsedEvent {
    const usage = this.counts();
    const stats = this.model.stats;
    stats.outputTokens.observe(usage.completionTokens);
    stats.outputTokensTotal.inc(usage.completionTokens);
    stats.cachedTokens.observe(usage.cachedTokens);
    return { kind: 'end', usage };
  }

  /** A choice is over (its last deltas are queued): its finish, and the end once every choice is. */
  private over(out: ParsedEvent[], index: number, reason: FinishReason, matchedStop: string | number | null): void {
    this.finished[index] = true;
    this.remaining--;
    out.push(this.finishEvent(index, reason, matchedStop));
    if (this.remaining === 0) out.push(this.end());
  }

  /**
   * One engine message: the common case (content only, the choice goes on) is returned as
   * its one event (or null for none) with nothing queued; anything else is appended to
   * `out` in order (text, held tail, parser flush, finish, and the end once every choice is
   * over) and null is returned.
   */
  push(ev: EngineEvent, out: ParsedEvent[]): ParsedEvent | null {
    const now = performance.now();
    const stats = this.model.stats;
    const fresh = ev.kind === 'chunk' ? ev.chunk.tokenIds.length : ev.done.outputIds.length;
    if (fresh > 0) {
      if (this.last < 0) {
        if (this.opts.arrived !== undefined) stats.ttft.observe((now - this.opts.arrived) / 1000);
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
      if (this.finished[c.index]) return null; // a stop already ended this choice here
      const r = dec.push(c.tokenIds);
      if (this.ids) this.ids[c.index].push(...c.tokenIds);
      if (typeof r === 'string') return r ? new TextOutput(c.index, r, c.tokenIds, this) : null;
      this.queueDeltas(out, c.index, r, c.tokenIds);
      if (!dec.finished) return null;
      // A stop string, stop token or the token limit ended the choice before the engine did.
      this.engineEndsItself &&= enforcedByEngine(dec);
      this.over(out, c.index, dec.finishReason ?? 'stop', dec.matchedStop);
      return null;
    }
    const d = ev.done;
    this.promptTokens = d.promptTokens;
    this.cachedTokens = Math.max(this.cachedTokens, d.cachedTokens);
    if (this.finished[d.index]) return null;
    const dec = this.decoder(d.index);
    if (d.outputIds.length > 0) {
      if (this.ids) this.ids[d.index].push(...d.outputIds);
      const r = dec.push(d.outputIds);
      if (typeof r === 'string') {
        if (r) this.queueDeltas(out, d.index, [0, 0, r], d.outputIds);
      } else this.queueDeltas(out, d.index, r, d.outputIds);
    }
    // The engine ended the choice: the held text and the parser's flush (nothing when
    // a stop in these last ids already ended it).
    this.queueDeltas(out, d.index, dec.finish(), NO_IDS);
    this.over(out, d.index, dec.finishReason ?? finishReasonOf(d.finishReason), dec.matchedStop ?? d.matchedStopStr ?? null);
    return null;
  }
}

/** Whether a choice Portico ended ended on a rule the engine applies too (its engine stream is then read out, not aborted: run.ts). */
function enforcedByEngine(dec: ChoiceDecoder): boolean {
  // (matchedStop: a number for a stop token id, null for EOS, a string for a stop string.)
  return dec.finishReason === 'length' || typeof dec.matchedStop !== 'string';
}

const NO_IDS: readonly number[] = Object.freeze([]);
