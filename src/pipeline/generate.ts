// Dispatch one generation to a worker and expose its token stream. The router
// chooses the worker (and may hold the request in its queue); this keeps the
// worker's in-flight count and the router's load figures current (dispatch,
// first token, output tokens, end), and turns engine failures into client-facing
// errors. Routing happens when the stream is first read, so a routing failure
// (unknown worker, full queue) still reaches the client as an error status.

import type { SamplingOptions } from '../protocol/sampling.js';
import type { Worker } from '../router/worker-pool.js';
import type { Dispatch, RouteHints } from '../router/types.js';
import type { Cancellation, EngineEvent, GenerateParams } from '../engine/types.js';
import type { ServedModel } from './served-model.js';
import { engineParams, routeFor, type GenerationRequest } from './request.js';
import { migratingStream } from './migration.js';
import { WorkerTurn } from './worker-turn.js';
import { TokenCharge, type LimitTicket } from './rate-limit.js';


export type { RouteHints } from '../router/types.js';

export interface Generation {
  /** The worker serving the request (known once the stream has been read). */
  readonly worker: Worker;
  /** When the request left the router for its worker (performance.now()); NaN before. */
  readonly dispatchedAt: number;
  /** Leading prompt blocks the router believed the worker held. */
  readonly overlapBlocks: number;
  /** The data-parallel rank the request was pinned to (request's dp_rank or the router's choice), if any. */
  readonly dpRank?: number;
  readonly events: AsyncIterable<EngineEvent>;
}

class RoutedGeneration implements Generation {
  dispatch: Dispatch | null = null;
  dispatchedAt = NaN;
  events: AsyncIterable<EngineEvent>;

  constructor(model: ServedModel, promptIds: Uint32Array, params: GenerateParams, signal: Cancellation, route: RouteHints, limit: LimitTicket | null = null) {
    this.events = new RoutedEvents(this, model, promptIds, params, signal, route, limit);
  }

  get worker(): Worker {
    if (!this.dispatch) throw new Error('the generation has not been dispatched yet');
    return this.dispatch.worker;
  }

  get overlapBlocks(): number {
    return this.dispatch?.overlapBlocks ?? 0;
  }

  get dpRank(): number | undefined {
    return this.dispatch?.dpRank;
  }
}

export function generate(
  model: ServedModel,
  promptIds: Uint32Array,
  sampling: SamplingOptions,
  requestId: string,
  signal: Cancellation,
  route: RouteHints = {},
): Generation {
  model.stats.inputTokens.observe(promptIds.length);
  const params = engineParams(model, requestId, promptIds, sampling, route);
  return new RoutedGeneration(model, promptIds, params, signal, routeFor(model, route));
}

/**
 * A GenerationRequest's raw engine events, routed and counted as generate()'s are: for a
 * caller that wants the engine's ids rather than decoded output (the custom processors'
 * routed engine). Its output rules are not applied here; its rate limit is, as
 * runGeneration applies it (admitted on the first read, charged per event, released at
 * the end).
 */
export function routedGeneration(req: GenerationRequest): Generation {
  req.model.stats.inputTokens.observe(req.promptIds.length);
  return new RoutedGeneration(req.model, req.promptIds, req.engine, req.signal, req.route, req.limit);
}

/**
 * The routed token stream: routes on the first read, then hands each engine event on while
 * keeping the worker's in-flight count and the router's load figures current. A plain
 * iterator rather than an async generator: a generator layer cost several promise jobs per
 * event, this costs one await.
 */
class RoutedEvents implements AsyncIterableIterator<EngineEvent> {
  private readonly turn: WorkerTurn;
  private inner: AsyncIterator<EngineEvent> | null = null;
  /** Over: ended, failed or returned (later reads answer done). */
  private closed = false;
  /** The rate-limit place is held (admitted, not yet released). */
  private holding = false;
  private readonly charge: TokenCharge | null;

  constructor(
    private readonly gen: RoutedGeneration,
    private readonly model: ServedModel,
    private readonly promptIds: Uint32Array,
    private readonly params: GenerateParams,
    private readonly signal: Cancellation,
    private readonly route: RouteHints,
    private readonly limit: LimitTicket | null,
  ) {
    this.turn = new WorkerTurn(model);
    this.charge = limit === null ? null : new TokenCharge(limit);
  }

  /** Over: give the rate-limit place back (once). */
  private close(): void {
    this.closed = true;
    if (this.holding) {
      this.holding = false;
      this.limit!.release();
    }
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<EngineEvent>> {
    if (this.closed) return DONE;
    let inner = this.inner;
    if (!inner) {
      // Routing failures reach the caller as they are (no worker was taken yet).
      let d: Dispatch;
      try {
        if (this.limit !== null) {
          this.limit.admit(this.promptIds.length);
          this.holding = true;
        }
        const routed = this.model.router.route({ tokens: this.promptIds, hints: this.route, signal: this.signal });
        d = routed instanceof Promise ? await routed : routed;
      } catch (err) {
        this.close();
        throw err;
      }
      this.gen.dispatch = d;
      this.gen.dispatchedAt = this.turn.start(d, this.params);
      try {
        inner = this.inner = migratingStream(this.model, d, this.params, this.signal, this.route, this.turn)[Symbol.asyncIterator]();
      } catch (err) {
        this.close();
        throw this.turn.fail(err);
      }
    }
    let step: IteratorResult<EngineEvent>;
    try {
      step = await inner.next();
    } catch (err) {
      this.close();
      throw this.turn.fail(err);
    }
    if (step.done) {
      this.close();
      this.turn.end();
      return DONE;
    }
    this.turn.observe(step.value);
    if (this.charge !== null) this.charge.event(step.value);
    return step;
  }

  async return(): Promise<IteratorResult<EngineEvent>> {
    if (this.closed) return DONE;
    this.close();
    const inner = this.inner;
    if (!inner) return DONE;
    try {
      await inner.return?.();
    } catch (err) {
      throw this.turn.fail(err);
    }
    this.turn.end();
    return DONE;
  }
}

const DONE: IteratorResult<EngineEvent> = Object.freeze({ value: undefined, done: true }) as IteratorResult<EngineEvent>;
