// A model as served: its name, its native tokenizer/template/model card, the workers
// that generate for it and the router that picks one per request.

import type { Model } from '../native/core.js';
import type { WorkerPool } from '../router/worker-pool.js';
import type { Router } from '../router/types.js';
import type { ModelStats } from '../metrics/frontend.js';
import { log } from '../log.js';
import { DEFAULT_PD_SETTINGS, type PdSettings } from './pd-settings.js';
import { DEFAULT_MIGRATION, type MigrationSettings } from './migration-settings.js';
import type { VisionModel } from './vision-model.js';
import { engineSamplingDefaults, fileSamplingDefaults, mergeDefaults, type SamplingDefaults } from './sampling-defaults.js';

export interface ModelInfo {
  /** The context window in tokens: the engine's (GetModelInfo), else config.json's, else null. */
  contextLength: number | null;
  /** Where contextLength came from. */
  contextSource: 'config.json' | 'engine' | null;
  /** The engine's EOS ids (GetModelInfo), else generation_config.json ∪ config.json ∪ the tokenizer's. */
  eosTokenIds: number[];
  /** The engine's vocabulary size (GetModelInfo), else the tokenizer's. */
  vocabSize: number;
  /** Sampling defaults for fields a request leaves unset (see ./sampling-defaults.ts). */
  samplingDefaults: SamplingDefaults;
}

/** The output parsers configured for a model (--tool-call-parser, --reasoning-parser). */
export interface ParserConfig {
  tool: string | null;
  reasoning: string | null;
}

/** A LoRA adapter served under its own model name on its base model's workers. */
export interface Adapter {
  /** GenerateRequest.lora_id and the router's hash namespace (the adapter's name). */
  readonly id: string;
  /** The folder the workers load it from. */
  readonly path: string;
  readonly base: ServedModel;
}

/** The longest prompt accepted while the context length is unknown (--max-prompt-tokens). */
export const DEFAULT_MAX_PROMPT_TOKENS = 131072;

export class ServedModel {
  readonly info: ModelInfo;
  readonly created = Math.floor(Date.now() / 1000);
  /** Adapters served on this (base) model, by name. */
  readonly adapters = new Map<string, ServedModel>();
  /** Disaggregated serving's settings (bootstrap port fallback, rendezvous bound). */
  pd: PdSettings = DEFAULT_PD_SETTINGS;
  /** Request migration's settings (--migration-limit, --migration-max-seq-len). */
  migration: MigrationSettings = DEFAULT_MIGRATION;
  /** Image input (./vision-model.ts), or null: a text-only model. */
  vision: VisionModel | null = null;

  constructor(
    readonly name: string,
    readonly native: Model,
    readonly pool: WorkerPool,
    /** Picks the worker of each request among `pool`'s (the caller builds it over that pool). */
    readonly router: Router,
    readonly stats: ModelStats,
    readonly parsers: ParserConfig = { tool: null, reasoning: null },
    /** Prompt tokens accepted when no context length is known (see completionBudget). */
    readonly maxPromptTokens: number = DEFAULT_MAX_PROMPT_TOKENS,
    /** The model folder (generation_config.json is read from it); unset: no file defaults. */
    readonly path?: string,
    /** Set when this model is a LoRA adapter: it shares its base's tokenizer, workers, router and facts. */
    readonly adapter: Adapter | null = null,
  ) {
    if (adapter) {
      this.info = adapter.base.info;
      this.pd = adapter.base.pd;
      this.migration = adapter.base.migration;
      this.vision = adapter.base.vision;
      return;
    }
    const i = native.info();
    const ctx = i.contextLength ?? null;
    this.info = { contextLength: ctx, contextSource: ctx === null ? null : 'config.json', eosTokenIds: i.eosTokenIds, vocabSize: i.vocabSize, samplingDefaults: path ? fileSamplingDefaults(path) : {} };
  }

  /** A view of this model serving LoRA adapter `name` (lora_id `name`) from `path`. */
  adapterView(name: string, path: string, stats: ModelStats): ServedModel {
    return new ServedModel(name, this.native, this.pool, this.router, stats, this.parsers, this.maxPromptTokens, this.path, { id: name, path, base: this });
  }

  /**
   * Take the engine's model facts (GetModelInfo) from the first worker that answers:
   * context length, EOS ids and vocabulary size when it reports them, and its sampling
   * defaults ahead of generation_config.json's. Workers that fail are skipped; with none,
   * the folder's facts stand (and an unknown context caps prompts at maxPromptTokens).
   */
  async adoptEngineFacts(timeoutMs = 5000): Promise<void> {
    for (const w of this.pool.workers) {
      let timer: NodeJS.Timeout | undefined;
      try {
        const info = await Promise.race([
          w.client.modelInfo(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no GetModelInfo answer in ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        if (info.maxContextLength > 0) {
          this.info.contextLength = info.maxContextLength;
          this.info.contextSource = 'engine';
        }
        if (info.eosTokenIds.length > 0) this.info.eosTokenIds = [...info.eosTokenIds];
        if (info.vocabSize > 0) this.info.vocabSize = info.vocabSize;
        this.info.samplingDefaults = mergeDefaults(engineSamplingDefaults(info, (why) => log.warn(`model ${this.name}: ${why}`)), this.info.samplingDefaults);
        return;
      } catch (err) {
        log.debug(`model ${this.name}: GetModelInfo from worker ${w.id} failed: ${(err as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    }
    if (this.info.contextLength !== null) return;
    // (No worker URL here: the log line is read by people and by scripts that look for the listen address.)
    log.info(`model ${this.name}: context length unknown (no config.json, no GetModelInfo answer); prompts are capped at ${this.maxPromptTokens} tokens (--max-prompt-tokens)`);
  }
}
