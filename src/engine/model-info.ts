// GetModelInfo answers of the SGLang and vLLM protocols carry the same fields: one mapping
// into the engine-neutral EngineModelInfo serves both.

import type { EngineModelInfo } from './types.js';

type ModelInfoReply = Omit<EngineModelInfo, 'servedModelName' | 'preferredSamplingParams'> & { servedModelName: string; preferredSamplingParams?: string };

export function modelInfoFrom(r: ModelInfoReply): EngineModelInfo {
  return {
    modelPath: r.modelPath,
    servedModelName: r.servedModelName || r.modelPath,
    tokenizerPath: r.tokenizerPath,
    isGeneration: r.isGeneration,
    maxContextLength: r.maxContextLength,
    maxReqInputLen: r.maxReqInputLen,
    vocabSize: r.vocabSize,
    eosTokenIds: r.eosTokenIds,
    bosTokenId: r.bosTokenId,
    padTokenId: r.padTokenId,
    modelType: r.modelType,
    architectures: r.architectures,
    supportsVision: r.supportsVision,
    defaultSamplingParamsJson: r.defaultSamplingParamsJson,
    preferredSamplingParams: r.preferredSamplingParams ?? '',
  };
}
