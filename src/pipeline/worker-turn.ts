// One request's time on one worker, for the router and the pool, and what a failure on a
// worker means for the client and for that worker's health.

import { ApiError } from '../protocol/errors.js';
import { EngineError } from '../engine/errors.js';
import type { EngineEvent, GenerateParams } from '../engine/types.js';
import type { Dispatch } from '../router/types.js';
import type { Worker } from '../router/worker-pool.js';
import type { ServedModel } from './served-model.js';

/**
 * One request's time on its worker, for the router and the pool: taken when dispatched
 * (in-flight count, dispatch time, the dp rank into the engine parameters), kept current per
 * engine message (first token: the breaker's run of failures closes; output tokens), and
 * given back once (end, or a failure: what the failure says of the worker).
 */
export class WorkerTurn {
  private d: Dispatch | null = null;
  private produced = 0;
  private over = false;

  constructor(private readonly model: ServedModel) {}

  /** The request leaves for `d`'s worker: returns the dispatch time (performance.now()). */
  start(d: Dispatch, params: GenerateParams): number {
    this.d = d;
    if (d.dpRank !== undefined) params.dataParallelRank = d.dpRank;
    d.worker.inflight++;
    return performance.now();
  }

  observe(ev: EngineEvent): void {
    if (this.over) return; // a migrated request's later events are another turn's
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
  }

  /** The engine stream is over (ended, read out or aborted). Idempotent. */
  end(): void {
    if (this.over) return;
    this.over = true;
    if (this.d) {
      this.d.worker.inflight--;
      this.d.done();
    }
  }

  /** The engine stream failed: ends the turn, and returns the failure as the client sees it. */
  fail(err: unknown): ApiError {
    this.end();
    return workerFailure(this.model, this.d!.worker, err);
  }
}

/**
 * A failure of `worker` as the client sees it (ApiError.from: engine failures are mapped by
 * src/protocol/engine-errors.ts alone), after telling the pool what it says about the
 * worker: a lost connection or a silent worker takes it out of rotation, one failed stream
 * is only a strike for the breaker.
 */
export function workerFailure(model: ServedModel, worker: Worker, err: unknown, op: 'generate' | 'embed' = 'generate'): ApiError {
  if (err instanceof EngineError) model.pool.reportFailure(worker, err.health);
  return ApiError.from(err, op);
}
