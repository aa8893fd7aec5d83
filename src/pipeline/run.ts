// The one loop of a generation: route → open the engine stream → for each engine message,
// push its ids into the choices' native outputs → hand the events to the sink. It alone
// decides how the engine stream is left (read out in the background when the engine ends
// the request by itself, aborted otherwise) and when the request's turn on its worker ends.
// Every endpoint (OpenAI chat and completions, Anthropic messages, Responses; unary and
// streaming) is a GenerationSink over it.

import { ApiError } from '../protocol/errors.js';
import type { EngineEvent } from '../engine/types.js';
import type { Dispatch } from '../router/types.js';
import type { Worker } from '../router/worker-pool.js';
import { WorkerTurn } from './generate.js';
import { LogprobBook } from './logprobs.js';
import { ChoiceOutputs, settleEngine, type ParsedEvent } from './outputs.js';
import type { GenerationRequest } from './request.js';

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
  /** The choices' logprobs (the request asked for them), else null. */
  readonly logprobs: LogprobBook | null;
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

class Running implements RunningGeneration {
  readonly logprobs: LogprobBook | null;
  it: AsyncIterator<EngineEvent> | null = null;
  stopped = false;

  constructor(
    readonly dispatch: Dispatch,
    readonly dispatchedAt: number,
    logprobs: boolean,
  ) {
    this.logprobs = logprobs ? new LogprobBook() : null;
  }

  get worker(): Worker {
    return this.dispatch.worker;
  }

  get overlapBlocks(): number {
    return this.dispatch.overlapBlocks;
  }

  get dpRank(): number | undefined {
    return this.dispatch.dpRank;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    // The loop's pending read settles (done, or the cancel's rejection), and it leaves quietly.
    void this.it?.return?.()?.then(undefined, () => undefined);
  }
}

/**
 * Run one generation into `sink`. Resolves once the end event was handed over (or the sink
 * or a stop() ended it); rejects with the ApiError of a routing or engine failure, having
 * handed over no end event.
 */
export async function runGeneration(req: GenerationRequest, sink: GenerationSink): Promise<void> {
  const { model } = req;
  model.stats.inputTokens.observe(req.promptIds.length);
  const routed = model.router.route({ tokens: req.promptIds, hints: req.route, signal: req.signal });
  const d = routed instanceof Promise ? await routed : routed;
  const turn = new WorkerTurn(model);
  const g = new Running(d, turn.start(d, req.engine), req.logprobs);
  sink.begin?.(g);
  let it: AsyncIterator<EngineEvent>;
  try {
    it = g.it = d.worker.client.generate(req.engine, req.signal)[Symbol.asyncIterator]();
  } catch (err) {
    throw turn.fail(err);
  }
  if (g.stopped) return leave(it, turn, false);
  const choices = new ChoiceOutputs(model, req.output);
  const book = g.logprobs;
  const out: ParsedEvent[] = [];
  for (;;) {
    let step: IteratorResult<EngineEvent>;
    try {
      step = await it.next();
    } catch (err) {
      // (The engine stream closed itself on its failure.) A stop() cancels the stream:
      // its rejection is not the worker's failure.
      if (g.stopped) return turn.end();
      throw turn.fail(err);
    }
    if (step.done) {
      turn.end();
      if (g.stopped) return;
      throw new ApiError(502, 'the engine ended the stream before every choice finished', { code: 'engine_error' });
    }
    if (g.stopped) return leave(it, turn, false);
    const ev = step.value;
    turn.observe(ev);
    let stop = false;
    try {
      book?.record(ev);
      const one = choices.push(ev, out);
      if (one) {
        const r = sink.event(one);
        if (r !== undefined) stop = (r instanceof Promise ? await r : r) === STOP;
      } else if (out.length > 0) {
        for (let i = 0; i < out.length && !stop; i++) {
          const r = sink.event(out[i]!);
          if (r !== undefined) stop = (r instanceof Promise ? await r : r) === STOP;
        }
        out.length = 0;
      }
    } catch (err) {
      await leave(it, turn, false);
      throw err;
    }
    if (stop || g.stopped) return leave(it, turn, false);
    // Every choice is answered: leave the engine stream (read out, or aborted).
    if (choices.remaining === 0) return leave(it, turn, choices.engineEndsItself);
  }
}

/** Leave the open engine stream (see settleEngine); the worker's turn ends when it is over. */
async function leave(it: AsyncIterator<EngineEvent>, turn: WorkerTurn, endsItself: boolean): Promise<void> {
  const settled: AsyncIterator<EngineEvent> = {
    next: async () => {
      try {
        const r = await it.next();
        if (r.done) turn.end();
        return r;
      } catch (err) {
        turn.fail(err);
        throw err;
      }
    },
    return: async () => {
      try {
        return (await it.return?.()) ?? { value: undefined, done: true };
      } finally {
        turn.end();
      }
    },
  };
  await settleEngine(settled, endsItself);
}
