// One generated (or prompt) token with its log-probability: what the pipeline records
// off the engine's events (pipeline/logprobs.ts) and the response writers write
// (./logprobs-response.ts). It lives in the protocol, which the pipeline depends on, so
// the protocol needs nothing of the pipeline.

export interface TokenLogprob {
  id: number;
  logprob: number;
  /** Most likely alternatives, best first; empty when none were asked for. */
  top: Array<{ id: number; logprob: number }>;
}
