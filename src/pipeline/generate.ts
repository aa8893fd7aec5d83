// Dispatch one generation to a worker and expose its token stream. The router
// chooses the worker (and may hold the request in its queue); this keeps the
// worker's in-flight count and the router's load figures current (dispatch,
// first token, output tokens, end), and turns engine failures into client-facing
// errors. Routing happens when the stream is first read, so a routing failure
// (unknown worker, full queue) still reaches the client as an error status.

import { ApiError } from '../protocol/errors.js';
import type { SamplingOptions } from '../protocol/sampling.js';
import type { Worker } from '../router/worker-pool.js';
import type { Dispatch, RouteHints } from '../router/types.js';
import { EngineError } from '../engine/errors.js';
import type { Cancellation, EngineEvent, GenerateParams } from '../engine/types.js';
import type { ServedModel } from './served-model.js';

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

  constructor(model: ServedModel, promptIds: Uint32Array, params: GenerateParams, signal: Cancellation, route: RouteHints) {
    this.events = new RoutedEvents(this, model, promptIds, params, signal, route);
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
  // Unset fields take the model's defaults (engine GetModelInfo, then generation_config.json).
  const d = model.info.samplingDefaults;
  const params: GenerateParams = {
    requestId,
    inputIds: promptIds,
    maxNewTokens: sampling.maxTokens,
    temperature: sampling.temperature ?? d.temperature,
    topP: sampling.topP ?? d.topP,
    topK: sampling.topK ?? d.topK,
    minP: sampling.minP ?? d.minP,
    frequencyPenalty: sampling.frequencyPenalty,
    presencePenalty: sampling.presencePenalty,
    repetitionPenalty: sampling.repetitionPenalty ?? d.repetitionPenalty,
    stopTokenIds: sampling.stopTokenIds,
    ignoreEos: sampling.ignoreEos,
    minNewTokens: sampling.minTokens,
    seed: sampling.seed,
    n: sampling.n,
    constraint: sampling.constraint,
    logitBias: sampling.logitBias,
    logprobs: sampling.logprobs,
    topLogprobs: sampling.topLogprobs,
    promptLogprobs: sampling.promptLogprobs,
    dataParallelRank: route.dpRank,
    // A LoRA adapter: the engine applies it, and its KV blocks live in a namespace of their own.
    loraId: model.adapter?.id,
    stream: true,
  };
  return new RoutedGeneration(model, promptIds, params, signal, model.adapter ? { ...route, lora: model.adapter.id } : route);
}

/**
 * The routed token stream: routes on the first read, then hands each engine event on while
 * keeping the worker's in-flight count and the router's load figures current. A plain
 * iterator rather than an async generator: a generator layer cost several promise jobs per
 * event, this costs one await.
 */
class RoutedEvents implements AsyncIterableIterator<EngineEvent> {
  private d: Dispatch | null = null;
  private inner: AsyncIterator<EngineEvent> | null = null;
  private produced = 0;
  /** Over: ended, failed or returned (later reads answer done). */
  private closed = false;

  constructor(
    private readonly gen: RoutedGeneration,
    private readonly model: ServedModel,
    private readonly promptIds: Uint32Array,
    private readonly params: GenerateParams,
    private readonly signal: Cancellation,
    private readonly route: RouteHints,
  ) {}

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
        const routed = this.model.router.route({ tokens: this.promptIds, hints: this.route, signal: this.signal });
        d = routed instanceof Promise ? await routed : routed;
      } catch (err) {
        this.closed = true;
        throw err;
      }
      this.d = d;
      this.gen.dispatch = d;
      this.gen.dispatchedAt = performance.now();
      if (d.dpRank !== undefined) this.params.dataParallelRank = d.dpRank;
      d.worker.inflight++;
      try {
        inner = this.inner = d.worker.client.generate(this.params, this.signal)[Symbol.asyncIterator]();
      } catch (err) {
        throw this.fail(err);
      }
    }
    let step: IteratorResult<EngineEvent>;
    try {
      step = await inner.next();
    } catch (err) {
      throw this.fail(err);
    }
    if (step.done) {
      this.finish();
      return DONE;
    }
    const ev = step.value;
    const fresh = ev.kind === 'chunk' ? ev.chunk.tokenIds.length : ev.done.outputIds.length;
    if (fresh > 0 || ev.kind === 'done') {
      const d = this.d!;
      if (this.produced === 0) {
        d.firstToken();
        // The worker is serving this request: that closes its breaker's run of failures.
        this.model.pool.reportSuccess(d.worker);
      }
      this.produced += fresh;
      d.output(this.produced);
    }
    return step;
  }

  async return(): Promise<IteratorResult<EngineEvent>> {
    if (this.closed) return DONE;
    const inner = this.inner;
    if (!inner) {
      this.closed = true;
      return DONE;
    }
    try {
      await inner.return?.();
    } catch (err) {
      throw this.fail(err);
    }
    this.finish();
    return DONE;
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.d) {
      this.d.worker.inflight--;
      this.d.done();
    }
  }

  private fail(err: unknown): ApiError {
    this.finish();
    return engineFailure(this.model, this.d!.worker, err);
  }
}

const DONE: IteratorResult<EngineEvent> = Object.freeze({ value: undefined, done: true }) as IteratorResult<EngineEvent>;

/**
 * An engine failure as the client sees it (ApiError.fromEngine: src/protocol/engine-errors.ts),
 * after telling the pool what it says about the worker: a lost connection or a silent worker
 * takes it out of rotation, one failed stream is only a strike for the breaker.
 */
export function engineFailure(model: ServedModel, worker: Worker, err: unknown, op: 'generate' | 'embed' = 'generate'): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof EngineError) {
    model.pool.reportFailure(worker, err.health);
    return ApiError.fromEngine(err, op);
  }
  return ApiError.from(err);
}
