// Turn the engine's token stream for one choice back into text: the native
// incremental detokenizer emits only complete characters, so a multi-byte character
// split across tokens is never sent half-way.

import { Detokenizer } from '../native/core.js';
import type { ServedModel } from './served-model.js';

export type FinishReason = 'stop' | 'length' | 'abort' | 'tool_calls' | 'error';

export class ChoiceDecoder {
  private readonly detok: Detokenizer;
  completionTokens = 0;

  constructor(model: ServedModel, skipSpecialTokens: boolean) {
    this.detok = new Detokenizer(model.native, skipSpecialTokens);
  }

  /** Text made final by these tokens ('' when they only extend a pending character). */
  push(tokenIds: readonly number[]): string {
    this.completionTokens += tokenIds.length;
    return this.detok.push(Uint32Array.from(tokenIds));
  }

  /** Whatever text is still pending at the end of the sequence. */
  finish(): string {
    return this.detok.finish();
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
