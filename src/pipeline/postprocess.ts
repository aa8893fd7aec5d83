// Turn the engine's token stream for one choice back into text, with the request's
// stop rules: the native Sequence detokenizes incrementally (never half a character),
// holds back a possible stop string until it is decided, hides stop tokens, and
// decides when the choice is over (stop string, stop token, EOS, max tokens).

import { newSequence, type Sequence } from '../native/core.js';
import type { ServedModel } from './served-model.js';

export type FinishReason = 'stop' | 'length' | 'abort' | 'tool_calls' | 'error';

/** What a choice's output must honour; the engine is told the token-level parts too. */
export interface OutputRules {
  skipSpecialTokens: boolean;
  stop?: string[];
  stopTokenIds?: number[];
  includeStopStrInOutput?: boolean;
  minTokens?: number;
  ignoreEos?: boolean;
  maxTokens?: number;
}

export class ChoiceDecoder {
  private readonly seq: Sequence;
  /** A stop or the token limit ended the choice (learnt from a push's return value). */
  private done = false;

  constructor(model: ServedModel, rules: OutputRules) {
    this.seq = newSequence(model.native, rules);
  }

  /** Text made final by these tokens ('' when held back: a partial character or stop string). */
  push(tokenIds: readonly number[]): string {
    if (this.done) return '';
    // One token per chunk is the streaming norm: a single-number native call.
    const r = tokenIds.length === 1 ? this.seq.pushToken(tokenIds[0]!) : this.seq.pushTokens(tokenIds);
    if (typeof r === 'string') return r;
    this.done = true;
    return r[0];
  }

  /** Whatever text is still held at the end of the sequence. */
  finish(): string {
    return this.seq.finish();
  }

  /** The choice is over on Portico's side (a stop matched or the token limit was reached). */
  get finished(): boolean {
    return this.done;
  }

  get finishReason(): 'stop' | 'length' | null {
    return this.seq.finishReason;
  }

  get matchedStop(): string | number | null {
    return this.seq.matchedStop;
  }

  /** Generated tokens that count for usage (through the stop token; none after it). */
  get completionTokens(): number {
    return this.seq.generatedTokens;
  }
}

/** Map an engine finish reason onto the OpenAI vocabulary. */
export function finishReasonOf(engineReason: string): FinishReason {
  switch (engineReason) {
    case 'length':
      return 'length';
    case 'abort':
      return 'abort';
    default:
      return 'stop';
  }
}
