// What runGeneration hands its output to (a sink) and what a sink is told of the running
// generation; in a file of their own so sinks that wrap other sinks (generation-trace.ts) and
// runGeneration (run.ts) both import them without importing each other.

import type { Worker } from '../router/worker-pool.js';
import type { LogprobBook } from './logprobs.js';
import type { ParsedEvent } from './outputs.js';

/** Returned (or resolved) by GenerationSink.event to end the generation early (the engine is aborted). */
export const STOP = Symbol('stop generation');
export type SinkResult = void | typeof STOP | Promise<void | typeof STOP | unknown>;

/** What a generation is once it left the router. */
export interface RunningGeneration {
  readonly worker: Worker;
  /** When the request left the router for its worker (performance.now()). */
  readonly dispatchedAt: number;
  /** Leading prompt blocks the router believed the worker held. */
  readonly overlapBlocks: number;
  /** The data-parallel rank the request was pinned to, if any. */
  readonly dpRank?: number;
  /** Disaggregated serving: the prefill leg's worker and rank (the worker above decodes). */
  readonly prefill?: { readonly worker: Worker; readonly dpRank?: number };
  /** The choices' logprobs (the request asked for them), else null. */
  readonly logprobs: LogprobBook | null;
  /**
   * Every id choice `index` generated so far, as of the event being handed over (requests
   * with output.collectTokenIds; empty otherwise): for a writer that sends the ids with the
   * text they made (KServe's streamed output_ids), ids of held-back text included.
   */
  tokenIds(index: number): readonly number[];
  /** End the generation now: the engine is aborted and runGeneration resolves. */
  stop(): void;
}

export interface GenerationSink {
  /** The worker was chosen (before the engine stream is opened). */
  begin?(g: RunningGeneration): void;
  /**
   * One output event, in order; every generation ends with one `end` event. A promise
   * pauses the generation until it settles (backpressure); STOP (or a promise of it) ends it.
   */
  event(ev: ParsedEvent): SinkResult;
}
