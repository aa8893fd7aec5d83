// The routed engine a processor's factory receives: a tokenized request becomes the one
// GenerationRequest (pipeline/request.ts: the engine parameters from the same builder as
// every endpoint's), goes through Portico's own router, queues and cancellation
// (routedGeneration), and its raw engine events come back as EngineOutputs. Failures are raised as the processor contract says:
// InvalidArgument for a request the worker (or Portico) rejected, RoutedEngineError with
// the client-facing status for any other classified failure (engine-errors.ts mapping).

import { randomUUID } from 'node:crypto';
import { ApiError } from '../protocol/errors.js';
import { routedGeneration, type Generation } from '../pipeline/generate.js';
import { generationRequest } from '../pipeline/request.js';
import { completionBudget } from '../pipeline/preprocess.js';
import type { ServedModel } from '../pipeline/served-model.js';
import type { Cancellation } from '../engine/types.js';
import type { SamplingOptions } from '../protocol/sampling.js';
import type { EngineOutput, PreprocessedRequest, RequestContext, RoutedEngine } from './contract.js';
import { InvalidArgument, routedFailure } from './errors.js';
import { ProcessorContext } from './request-context.js';

const NEVER: Cancellation = { aborted: false, addEventListener() {}, removeEventListener() {} };

export function routedEngineFor(model: ServedModel): RoutedEngine {
  return { generate: (request, context) => routedOutputs(model, request, context) };
}

async function* routedOutputs(model: ServedModel, req: PreprocessedRequest, context: RequestContext | undefined): AsyncGenerator<EngineOutput> {
  const ids = promptIds(model, req);
  // The request's own context carries its cancellation and engine request id; a processor
  // that passes none still gets a unique id (and no cancellation).
  const own = context instanceof ProcessorContext ? context : null;
  let gen: Generation;
  try {
    const request = generationRequest({
      model,
      promptIds: ids,
      sampling: samplingOf(req),
      maxTokens: completionBudget(model, ids.length, req.maxTokens, 'prompt'),
      requestId: own ? own.nextEngineRequestId() : `proc-${randomUUID()}`,
      signal: own ? own.ex.cancellation : NEVER,
      route: {},
      arrived: performance.now(),
      skipSpecialTokens: true,
      // The request's API key draws on its rate-limit budget (admitted on the first read).
      limit: own ? own.ex.rateLimit : null,
    });
    gen = routedGeneration(request);
  } catch (err) {
    throw routedFailure(ApiError.from(err));
  }
  try {
    for await (const ev of gen.events) {
      if (ev.kind === 'chunk') {
        const c = ev.chunk;
        yield { index: c.index, tokenIds: c.tokenIds, finishReason: null, promptTokens: c.promptTokens, completionTokens: c.completionTokens, cachedTokens: c.cachedTokens };
      } else {
        const d = ev.done;
        yield { index: d.index, tokenIds: d.outputIds, finishReason: d.finishReason, matchedTokenId: d.matchedTokenId, promptTokens: d.promptTokens, completionTokens: d.completionTokens, cachedTokens: d.cachedTokens };
      }
    }
  } catch (err) {
    // Engine failures arrive mapped already (WorkerTurn.fail: engine-errors.ts); routing ones carry their status.
    throw routedFailure(ApiError.from(err));
  }
}

/**
 * The processor's sampling options as the request path's own: PreprocessedRequest names its
 * fields as SamplingOptions does, so they go to generationRequest (the one place options
 * change shape) as they are; only the choice count's default and the seed's type differ.
 */
function samplingOf(req: PreprocessedRequest): SamplingOptions {
  const { tokenIds: _ids, n, seed, ...sampling } = req;
  return { ...sampling, n: n ?? 1, seed: seedOf(seed) };
}

function promptIds(model: ServedModel, req: PreprocessedRequest): Uint32Array {
  const t = req?.tokenIds;
  if (!(t instanceof Uint32Array) && !Array.isArray(t)) throw new InvalidArgument('the preprocessed request needs `tokenIds` (an array of token ids)');
  if (t.length === 0) throw new InvalidArgument('the preprocessed request has no token ids');
  const vocab = model.info.vocabSize;
  for (const id of t) {
    if (!Number.isInteger(id) || id < 0 || id >= vocab) throw new InvalidArgument(`token id ${String(id)} is outside the vocabulary (size ${vocab})`);
  }
  return t instanceof Uint32Array ? t : Uint32Array.from(t);
}

/** A processor's numeric seed as the engine's 64-bit value (an integer a double holds exactly). */
function seedOf(seed: number | bigint | undefined): bigint | undefined {
  if (seed === undefined || typeof seed === 'bigint') return seed;
  if (!Number.isSafeInteger(seed)) throw ApiError.badRequest(`\`seed\` must be an integer, got ${seed}`, 'seed');
  return BigInt(seed);
}
