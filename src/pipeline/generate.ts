// Dispatch one generation to a worker and expose its token stream. Keeps the
// worker's in-flight count, and turns engine failures into client-facing errors.

import { ApiError } from '../protocol/errors.js';
import type { SamplingOptions } from '../protocol/sampling.js';
import type { Worker } from '../router/worker-pool.js';
import { EngineError } from '../engine/errors.js';
import type { EngineEvent } from '../engine/types.js';
import type { ServedModel } from './served-model.js';

export interface Generation {
  readonly worker: Worker;
  readonly events: AsyncIterable<EngineEvent>;
}

/** Where the client asked the request to go (nvext / routing headers). */
export interface RouteHints {
  workerId?: number;
  dpRank?: number;
}

export function generate(
  model: ServedModel,
  promptIds: Uint32Array,
  sampling: SamplingOptions,
  requestId: string,
  signal: AbortSignal,
  route: RouteHints = {},
): Generation {
  const worker = route.workerId === undefined ? model.pool.pick() : model.pool.pickById(route.workerId);
  model.stats.inputTokens.observe(promptIds.length);
  const stream = worker.client.generate(
    {
      requestId,
      inputIds: promptIds,
      maxNewTokens: sampling.maxTokens,
      temperature: sampling.temperature,
      topP: sampling.topP,
      topK: sampling.topK,
      minP: sampling.minP,
      frequencyPenalty: sampling.frequencyPenalty,
      presencePenalty: sampling.presencePenalty,
      repetitionPenalty: sampling.repetitionPenalty,
      stopTokenIds: sampling.stopTokenIds,
      ignoreEos: sampling.ignoreEos,
      minNewTokens: sampling.minTokens,
      seed: sampling.seed,
      n: sampling.n,
      dataParallelRank: route.dpRank,
      stream: true,
    },
    signal,
  );
  return { worker, events: tracked(model, worker, stream) };
}

async function* tracked(model: ServedModel, worker: Worker, stream: AsyncIterable<EngineEvent>): AsyncGenerator<EngineEvent> {
  worker.inflight++;
  try {
    yield* stream;
  } catch (err) {
    throw engineFailure(model, worker, err);
  } finally {
    worker.inflight--;
  }
}

function engineFailure(model: ServedModel, worker: Worker, err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof EngineError) {
    if (err.code === 'unavailable') {
      model.pool.markDown(worker);
      return new ApiError(503, `worker ${worker.client.url} is unavailable: ${err.message}`, { type: 'service_unavailable', code: 'worker_unavailable' });
    }
    return new ApiError(502, `worker ${worker.client.url} failed: ${err.message}`, { type: 'internal_error', code: 'engine_error' });
  }
  return ApiError.from(err);
}
