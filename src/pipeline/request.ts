// One generation as the pipeline runs it: what a protocol reader's request becomes once its
// prompt is tokenized and its budget known. This is the one place where options change
// shape: the request's SamplingOptions become the engine's GenerateParams (engineParams)
// and the choices' OutputRules (outputOptions) here and nowhere else; the endpoints build a
// GenerationRequest with generationRequest() and hand it to runGeneration (run.ts).

import type { SamplingOptions } from '../protocol/sampling.js';
import type { Cancellation, EngineMultimodal, GenerateParams } from '../engine/types.js';
import type { RouteHints } from '../router/types.js';
import type { OutputRules, ParsingPlan } from './postprocess.js';
import type { ServedModel } from './served-model.js';
import type { LimitTicket } from './rate-limit.js';
import type { RequestTrace } from '../tracing/request-trace.js';

/** How the choices' output is produced from the engine's tokens. */
export interface OutputOptions extends OutputRules {
  /** Number of choices the engine generates for this prompt. */
  n: number;
  /** Keep each choice's generated token ids and report them on its finish event. */
  collectTokenIds?: boolean;
  /** When the request arrived (performance.now()), for time-to-first-token. */
  arrived?: number;
  /** How the choices' text is parsed (reasoning, tool calls; parse-outputs.ts), or none. */
  parsing?: ParsingPlan | null;
}

export interface GenerationRequest {
  readonly model: ServedModel;
  readonly promptIds: Uint32Array;
  /** What the engine is sent (request id, prompt ids, sampling, token-level stops, logprobs). */
  readonly engine: GenerateParams;
  /** What each choice's output must honour, and how it is parsed. */
  readonly output: OutputOptions;
  /** Routing hints (named worker, dp rank, session, priority...). */
  readonly route: RouteHints;
  readonly signal: Cancellation;
  /** Record per-token logprobs for the writers (the engine was asked for them). */
  readonly logprobs: boolean;
  /** The API key's rate-limit budget (./rate-limit.ts), or null: not limited. */
  readonly limit: LimitTicket | null;
  /** The request's trace (tracing on), else null: runGeneration adds its route and engine spans. */
  readonly trace: RequestTrace | null;
  /** The ids the router hashes, when they differ from the prompt's (images: image-prompt.ts). */
  readonly routeTokens?: Uint32Array;
}

/**
 * The engine's parameters for a prompt and the request's sampling options (the final budget
 * in maxTokens). Unset sampling fields take the model's defaults (engine GetModelInfo, then
 * generation_config.json: sampling-defaults.ts); a LoRA adapter's requests carry its id.
 */
export function engineParams(model: ServedModel, requestId: string, promptIds: Uint32Array, s: SamplingOptions, route: RouteHints): GenerateParams {
  const d = model.info.samplingDefaults;
  return {
    requestId,
    inputIds: promptIds,
    maxNewTokens: s.maxTokens,
    temperature: s.temperature ?? d.temperature,
    topP: s.topP ?? d.topP,
    topK: s.topK ?? d.topK,
    minP: s.minP ?? d.minP,
    frequencyPenalty: s.frequencyPenalty,
    presencePenalty: s.presencePenalty,
    repetitionPenalty: s.repetitionPenalty ?? d.repetitionPenalty,
    stopTokenIds: s.stopTokenIds,
    ignoreEos: s.ignoreEos,
    minNewTokens: s.minTokens,
    seed: s.seed,
    n: s.n,
    constraint: s.constraint,
    logitBias: s.logitBias,
    logprobs: s.logprobs,
    topLogprobs: s.topLogprobs,
    promptLogprobs: s.promptLogprobs,
    dataParallelRank: route.dpRank,
    // A LoRA adapter: the engine applies it (GenerateRequest.lora_id).
    loraId: model.adapter?.id,
    stream: true,
  };
}

/** The routing hints of a request for `model`: a LoRA adapter's KV blocks live in a namespace of their own. */
export function routeFor(model: ServedModel, route: RouteHints): RouteHints {
  return model.adapter ? { ...route, lora: model.adapter.id } : route;
}

export interface GenerationInput {
  model: ServedModel;
  promptIds: Uint32Array;
  sampling: SamplingOptions;
  /** The completion budget (completionBudget's answer; it replaces sampling.maxTokens). */
  maxTokens: number | undefined;
  requestId: string;
  signal: Cancellation;
  route: RouteHints;
  arrived: number;
  skipSpecialTokens: boolean;
  parsing?: ParsingPlan | null;
  collectTokenIds?: boolean;
  /** The request's rate-limit ticket (the face resolved its key), if its key is limited. */
  limit?: LimitTicket | null;
  /** The request's trace (Exchange.trace), if traced. */
  trace?: RequestTrace | null;
  /** The request's processed images and the ids the router hashes for them (image-prompt.ts). */
  images?: { multimodal: EngineMultimodal; routeTokens: Uint32Array } | null;
}

/** The one GenerationRequest of a prompt: engine parameters and output rules from the same options. */
export function generationRequest(i: GenerationInput): GenerationRequest {
  const s = i.maxTokens === i.sampling.maxTokens ? i.sampling : { ...i.sampling, maxTokens: i.maxTokens };
  const engine = engineParams(i.model, i.requestId, i.promptIds, s, i.route);
  const images = i.images ?? null;
  if (images !== null) {
    engine.multimodal = images.multimodal;
    return { ...withEngine(i, s, engine), routeTokens: images.routeTokens };
  }
  return withEngine(i, s, engine);
}

function withEngine(i: GenerationInput, s: SamplingOptions, engine: GenerateParams): GenerationRequest {
  return {
    model: i.model,
    promptIds: i.promptIds,
    engine,
    output: outputOptions(s, i),
    route: routeFor(i.model, i.route),
    signal: i.signal,
    logprobs: s.logprobs === true,
    limit: i.limit ?? null,
    trace: i.trace ?? null,
  };
}

/**
 * What each choice's output must honour (stop strings and ids, token budget, EOS), how it is
 * parsed, and what it reports. One literal: a spread of the rules followed by new keys took
 * 4.7 µs per request in V8 (each key added to the clone goes through the runtime), this 29 ns
 * (bench/request-build.bench.ts).
 */
function outputOptions(s: SamplingOptions, i: GenerationInput): OutputOptions {
  return {
    stop: s.stop,
    stopTokenIds: s.stopTokenIds,
    includeStopStrInOutput: s.includeStopStrInOutput,
    minTokens: s.minTokens,
    ignoreEos: s.ignoreEos,
    maxTokens: i.maxTokens,
    n: s.n,
    skipSpecialTokens: i.skipSpecialTokens,
    collectTokenIds: i.collectTokenIds,
    arrived: i.arrived,
    parsing: i.parsing ?? null,
  };
}
