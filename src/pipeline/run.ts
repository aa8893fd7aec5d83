// The one loop of a generation: route → open the engine stream → for each engine message,
// push its ids into the choices' native outputs → hand the events to the sink. It alone
// decides how the engine stream is left (read out in the background when the engine ends
// the request by itself, aborted otherwise) and when the request's turn on its worker ends.
// Every endpoint (OpenAI chat and completions, Anthropic messages, Responses; unary and
// streaming) is a GenerationSink over it.

import { ApiError } from '../protocol/errors.js';
import type { EngineEvent } from '../engine/types.js';
import type { EngineEventHandler, EngineEvents } from '../engine/generate-stream.js';
import { pushed } from './pushed.js';
import { migratingStream } from './migration.js';
import type { Dispatch } from '../router/types.js';
import type { Worker } from '../router/worker-pool.js';
import { WorkerTurn } from './worker-turn.js';
import { LogprobBook } from './logprobs.js';
import { ChoiceOutputs, type ParsedEvent } from './outputs.js';
import type { GenerationRequest } from './request.js';
import { TokenCharge } from './rate-limit.js';
import { GenerationTrace } from './generation-trace.js';
import { STOP, type GenerationSink, type RunningGeneration } from './sink.js';

export { STOP, type GenerationSink, type RunningGeneration, type SinkResult } from './sink.js';

class Running implements RunningGeneration {
  readonly logprobs: LogprobBook | null;
  stopped = false;
  /** Set by PushedRun (the choices it decodes). */
  choices: ChoiceOutputs | null = null;

  constructor(
    /** The request's worker: the one it continues on after a migration. */
    public dispatch: Dispatch,
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

  get prefill(): Dispatch | undefined {
    return this.dispatch.prefill;
  }

  tokenIds(index: number): readonly number[] {
    return this.choices?.generated(index) ?? NO_IDS;
  }

  /**
   * The run to stop, set by runGeneration once the engine stream is open. The run itself, not
   * a closure over it: on Node 24, V8's Maglev code for generate() kept such a closure's
   * context, and through it ~7.5 KB of every generation, alive through scavenges until a
   * full GC (bench/RESULTS.md, "What survives a scavenge on Node 24").
   */
  halt: { stop(): void } | null = null;

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.halt?.stop();
  }
}

/**
 * Run one generation into `sink`. Resolves once the end event was handed over (or the sink
 * or a stop() ended it); rejects with the ApiError of a routing or engine failure, having
 * handed over no end event. A request whose API key is rate-limited is admitted first
 * (a refusal rejects with the 429 before anything is routed) and holds its place among
 * the key's concurrent requests until the generation is over.
 */
export async function runGeneration(req: GenerationRequest, sink: GenerationSink): Promise<void> {
  const limit = req.limit;
  if (limit === null) return generate(req, sink);
  limit.admit(req.promptIds.length);
  try {
    await generate(req, sink);
  } finally {
    limit.release();
  }
}

async function generate(req: GenerationRequest, sink: GenerationSink): Promise<void> {
  const { model, trace } = req;
  model.stats.inputTokens.observe(req.promptIds.length);
  const routeStart = trace === null ? 0 : performance.now();
  const routed = model.router.route({ tokens: req.routeTokens ?? req.promptIds, hints: req.route, signal: req.signal });
  const d = routed instanceof Promise ? await routed : routed;
  // A traced request: the route phase, and the engine span whose context goes to the engine.
  const traced = trace === null ? null : new GenerationTrace(trace, req, d, routeStart, performance.now(), sink);
  if (traced !== null) sink = traced;
  const turn = new WorkerTurn(model);
  const g = new Running(d, turn.start(d, req.engine), req.logprobs);
  sink.begin?.(g);
  let events: EngineEvents;
  try {
    events = pushed(migratingStream(model, d, req.engine, req.signal, req.route, turn, traced === null ? (moved) => (g.dispatch = moved) : (moved) => {
      g.dispatch = moved;
      traced.moved(moved);
    }));
  } catch (err) {
    const e = turn.fail(err);
    traced?.failed(e);
    throw e;
  }
  if (g.stopped) {
    turn.end();
    traced?.settled();
    return;
  }
  const done = new Promise<void>((resolve, reject) => {
    const run = new PushedRun(req, sink, g, turn, events, resolve, reject);
    g.halt = run;
    events.pipe(run);
  });
  return traced === null ? done : done.then(() => traced.settled(), (err: unknown) => {
    traced.failed(err);
    throw err;
  });
}

type RunState = 'open' | 'drain' | 'gone';

/**
 * The loop's body, called by the engine stream for each message (in its data callback: no
 * promise per message). A sink's promise holds the stream until it settles; events of one
 * message that were not handed over yet wait with it.
 */
class PushedRun implements EngineEventHandler {
  /** Null once the stream is only read out ('drain'). */
  private choices: ChoiceOutputs | null;
  private readonly out: ParsedEvent[] = [];
  private at = 0;
  /** The sink's answer is pending (the stream is held). */
  private waiting = false;
  /** 'open' while the sink gets events; then the stream is read out ('drain', DRAIN_EVENTS at most) or gone. */
  private state: RunState = 'open';
  private drained = 0;
  /** The key's budget, charged with each engine message's tokens (null: not limited). */
  private readonly charge: TokenCharge | null;

  constructor(
    req: GenerationRequest,
    private sink: GenerationSink,
    private readonly g: Running,
    private readonly turn: WorkerTurn,
    private readonly events: EngineEvents,
    private readonly resolve: () => void,
    private readonly reject: (err: unknown) => void,
  ) {
    this.choices = g.choices = new ChoiceOutputs(req.model, req.output);
    this.charge = req.limit === null ? null : new TokenCharge(req.limit);
  }

  event(ev: EngineEvent): void {
    // Every token the engine generated counts, the ones read out after the answer too.
    if (this.charge !== null) this.charge.event(ev);
    if (this.state === 'drain') {
      // Read out in the background; an engine that does not stop where Portico did is aborted.
      if (++this.drained >= DRAIN_EVENTS) this.leave(false);
      return;
    }
    if (this.state !== 'open') return;
    try {
      const choices = this.choices!;
      const left = choices.remaining;
      this.turn.observe(ev);
      this.g.logprobs?.record(ev);
      const one = choices.push(ev, this.out);
      // A choice Portico ended before the engine did, others still going: nothing more of it is needed.
      if (ev.kind === 'chunk' && choices.remaining < left && choices.remaining > 0) this.events.settleChoice?.(ev.chunk.index);
      if (one) this.out.push(one);
      this.deliver();
    } catch (err) {
      this.failWith(err);
    }
  }

  end(): void {
    this.turn.end();
    if (this.state !== 'open') return;
    this.state = 'gone';
    this.reject(new ApiError(502, 'the engine ended the stream before every choice finished', { code: 'engine_error' }));
  }

  fail(err: unknown): void {
    const state = this.state;
    this.state = 'gone';
    if (state === 'drain') {
      this.turn.fail(err); // its outcome reaches no one; the pool still hears what it says of the worker
      return;
    }
    if (state !== 'open') {
      this.turn.end();
      return;
    }
    // A stop() cancels the stream: its failure is not the worker's.
    if (this.g.stopped) {
      this.turn.end();
      this.resolve();
      return;
    }
    this.reject(this.turn.fail(err));
  }

  /** Hand the queued events to the sink, in order, until one makes it wait. */
  private deliver(): void {
    const out = this.out;
    while (this.at < out.length) {
      const r = this.sink.event(out[this.at++]!);
      if (r === undefined) continue;
      if (r === STOP) return this.stop();
      if (r instanceof Promise) {
        this.waiting = true;
        this.events.hold();
        r.then(
          (v) => {
            this.waiting = false;
            if (this.state !== 'open') return;
            if (v === STOP) return this.stop();
            try {
              this.deliver();
            } catch (err) {
              return this.failWith(err);
            }
            if (!this.waiting && (this.state as RunState) !== 'gone') this.events.release();
          },
          (err: unknown) => {
            this.waiting = false;
            this.failWith(err);
          },
        );
        return;
      }
    }
    // Emptied by pops, not `out.length = 0` (a runtime call each time, and it drops the store).
    while (out.length !== 0) out.pop();
    this.at = 0;
    // Every choice is answered: leave the engine stream (read out, or aborted).
    const choices = this.choices!;
    if (choices.remaining === 0) {
      this.resolve();
      this.leave(choices.engineEndsItself);
    }
  }

  /**
   * Leave the open engine stream. When every choice is answered and the engine ends the
   * request by itself right after (max_tokens, a stop token), read the rest of its stream in
   * the background: aborting would cost an Abort rpc and a stream reset per request (the
   * usual case for short max_tokens). Otherwise abort it. The worker's turn ends when the
   * stream is over.
   */
  private leave(endsItself: boolean): void {
    if (endsItself && this.state === 'open') {
      this.state = 'drain';
      this.events.settle?.();
      // The engine stream holds this run until its trailers come: let go of the request's
      // answer (sink and choices: the exchange, the body, the native outputs) now, so a late
      // end does not keep them alive past the response (bench/RESULTS.md, "Fixed cost per
      // unary request: bisect").
      this.sink = DRAINED_SINK;
      this.choices = null;
      return;
    }
    this.state = 'gone';
    void this.events.return().then(
      () => this.turn.end(),
      () => this.turn.end(),
    );
  }

  /** The sink or stop() ends the generation early. */
  stop(): void {
    if (this.state !== 'open') return;
    this.leave(false);
    this.resolve();
  }

  private failWith(err: unknown): void {
    if (this.state !== 'open') return;
    this.leave(false);
    this.reject(err);
  }
}

const DRAINED_SINK: GenerationSink = { event: () => undefined };

/**
 * Events an engine may still send after Portico ended every choice on a rule the engine
 * applies too (its final message, or a few tokens if it saw the stop differently) before
 * the request is aborted after all.
 */
const DRAIN_EVENTS = 4;

const NO_IDS: readonly number[] = Object.freeze([]);
