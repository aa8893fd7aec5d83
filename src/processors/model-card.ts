// The model card a processor's factory receives: the worker's runtime config (its
// GetModelInfo answer, as published when it registered), the model's local folder, and
// Portico's native tokenizer and template for the model.

import { Detokenizer, isClientError } from '../native/core.js';
import { InvalidArgument } from './errors.js';
import type { ServedModel } from '../pipeline/served-model.js';
import type { EngineModelInfo } from '../engine/types.js';
import type { ModelCard, ModelTokenizer, RuntimeConfig } from './contract.js';

export function runtimeConfigOf(info: EngineModelInfo): RuntimeConfig {
  let defaults: Record<string, unknown> = {};
  try {
    const v: unknown = info.defaultSamplingParamsJson ? JSON.parse(info.defaultSamplingParamsJson) : {};
    if (v && typeof v === 'object' && !Array.isArray(v)) defaults = v as Record<string, unknown>;
  } catch {
    // an engine's malformed defaults are not the processor's concern
  }
  return {
    modelPath: info.modelPath,
    servedModelName: info.servedModelName,
    maxContextLength: info.maxContextLength,
    maxReqInputLen: info.maxReqInputLen,
    vocabSize: info.vocabSize,
    eosTokenIds: [...info.eosTokenIds],
    bosTokenId: info.bosTokenId,
    padTokenId: info.padTokenId,
    modelType: info.modelType,
    architectures: [...info.architectures],
    defaultSamplingParams: defaults,
    runtimeData: { tokenizerPath: info.tokenizerPath, isGeneration: info.isGeneration, supportsVision: info.supportsVision },
  };
}

export function modelCard(model: ServedModel, localDir: string, runtime: RuntimeConfig): ModelCard {
  const frozen = Object.freeze(runtime);
  return Object.freeze({
    name: model.name,
    runtimeConfig: () => frozen,
    localDir: () => localDir,
    contextLength: model.info.contextLength,
    tokenizer: tokenizerOf(model),
  });
}

function tokenizerOf(model: ServedModel): ModelTokenizer {
  const m = model.native;
  return Object.freeze({
    eosTokenIds: Object.freeze([...model.info.eosTokenIds]),
    encode: (text: string, addSpecialTokens = false) => Array.from(m.encode(text, addSpecialTokens)),
    decode: (ids: readonly number[], skipSpecialTokens = true) => m.decode(Uint32Array.from(ids), skipSpecialTokens),
    applyChatTemplate(messages: unknown[], opts: { tools?: unknown[] | null; addGenerationPrompt?: boolean; kwargs?: Record<string, unknown> | null } = {}) {
      const msg = JSON.stringify(messages);
      const tools = opts.tools && opts.tools.length > 0 ? JSON.stringify(opts.tools) : null;
      const body = Buffer.from(tools ? `${msg}${tools}` : msg);
      try {
        return Array.from(m.encodeChat(body, 0, Buffer.byteLength(msg), tools ? Buffer.byteLength(msg) : -1, tools ? body.length : -1, opts.addGenerationPrompt ?? true, opts.kwargs ? JSON.stringify(opts.kwargs) : null));
      } catch (err) {
        // Faults in the messages (or a template's raise_exception) are the request's: a 400.
        if (isClientError(err)) throw new InvalidArgument((err as Error).message);
        throw err;
      }
    },
    detokenizer(skipSpecialTokens = true) {
      const d = new Detokenizer(m, skipSpecialTokens);
      return { push: (ids: readonly number[]) => d.push(Uint32Array.from(ids)), finish: () => d.finish() };
    },
  });
}

/** What decides whether the card changed: the runtime config and the context length. */
export function cardKey(runtime: RuntimeConfig, contextLength: number | null): string {
  return JSON.stringify([runtime, contextLength]);
}
