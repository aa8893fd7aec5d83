// The routed engine a processor's factory receives: a tokenized request goes through
// Portico's own router, queues and cancellation (pipeline/generate.ts), and its engine
// events come back as EngineOutputs. Failures are raised as the processor contract says:
// InvalidArgument for a request the worker (or Portico) rejected, RoutedEngineError with
// the client-facing status for any other classified failure (engine-errors.ts mapping).

import { randomUUID } from 'node:crypto';
import { ApiError } from '../protocol/errors.js';
import { generate } from '../pipeline/generate.js';
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
  let sampling: SamplingOptions;
  try {
    sampling = {
      n: req.n ?? 1,
      maxTokens: completionBudget(model, ids.length, req.maxTokens, 'prompt'),
      minTokens: req.minTokens,
      temperature: req.temperature,
      topP: req.topP,
      topK: req.topK,
      minP: req.minP,
      seed: seedOf(req.seed),
      frequencyPenalty: req.frequencyPenalty,
      presencePenalty: req.presencePenalty,
      repetitionPenalty: req.repetitionPenalty,
      stopTokenIds: req.stopTokenIds,
      ignoreEos: req.ignoreEos,
    };
  } catch (err) {
    throw routedFailure(ApiError.from(err));
  }
  // The request's own context carries its cancellation and engine request id; a processor
  // that passes none still gets a unique id (and no cancellation).
  const own = context instanceof ProcessorContext ? context : null;
  const gen = generate(model, ids, sampling, own ? own.nextEngineRequestId() : `proc-${randomUUID()}`, own ? own.ex.cancellation : NEVER);
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
    throw routedFailure(ApiError.from(err));
  }
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
