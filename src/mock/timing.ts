// How long one simulated engine step takes. A step runs a batch that mixes
// prefill chunks and decode tokens, like a vLLM step with chunked prefill.
//
//   prefill = prefillMsPerToken * newTokens + prefillAttnMsPerTokenCtx * newTokens * context / 1000
//   decode  = stepMs + decodeMsPerSeq * batch + decodeMsPerKvToken * activeKvTokens / 1000
//   step    = (prefill + decode) / speedupRatio
//
// Only new (uncached) prompt tokens count toward prefill: a prefix-cache hit
// is what makes a repeated prompt fast. Decode cost grows with batch size and
// with the KV the batch attends over.

export interface TimingOptions {
  /** Fixed cost of a step with any decode in it (ms). */
  stepMs: number;
  /** Linear prefill cost per new prompt token (ms). */
  prefillMsPerToken: number;
  /** Attention share of prefill: ms per new token per 1000 tokens of context. */
  prefillAttnMsPerTokenCtx: number;
  /** Decode cost per running sequence in the batch (ms). */
  decodeMsPerSeq: number;
  /** Decode cost per 1000 KV tokens attended by the batch (ms). */
  decodeMsPerKvToken: number;
  /** Simulated time runs this many times faster than real time. */
  speedupRatio: number;
}

export interface StepShape {
  /** Prefill chunks this step: new tokens and the context they attend to (cached + earlier chunks + themselves). */
  prefill: Array<{ newTokens: number; context: number }>;
  /** Sequences producing one decode token. */
  decodeSeqs: number;
  /** KV tokens those decode sequences attend over. */
  decodeKvTokens: number;
}

export const DEFAULT_TIMING: TimingOptions = {
  stepMs: 10,
  prefillMsPerToken: 0.02,
  prefillAttnMsPerTokenCtx: 0.0005,
  decodeMsPerSeq: 0.02,
  decodeMsPerKvToken: 0.002,
  speedupRatio: 1,
};

export class TimingModel {
  readonly o: TimingOptions;
  constructor(o: Partial<TimingOptions> = {}) {
    this.o = { ...DEFAULT_TIMING, ...o };
    if (!(this.o.speedupRatio > 0)) throw new Error('speedup ratio must be > 0');
  }

  /** Simulated duration of a step, in simulated ms. */
  simulatedMs(s: StepShape): number {
    const o = this.o;
    let prefill = 0;
    for (const c of s.prefill) {
      prefill += o.prefillMsPerToken * c.newTokens + (o.prefillAttnMsPerTokenCtx * c.newTokens * c.context) / 1000;
    }
    const decode = s.decodeSeqs > 0
      ? o.stepMs + o.decodeMsPerSeq * s.decodeSeqs + (o.decodeMsPerKvToken * s.decodeKvTokens) / 1000
      : 0;
    return prefill + decode;
  }

  /** Wall-clock duration of a step, in ms. */
  wallMs(s: StepShape): number {
    return this.simulatedMs(s) / this.o.speedupRatio;
  }
}
