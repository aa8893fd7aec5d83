// A model as served: its name, its native tokenizer/template/model card, the workers
// that generate for it and the router that picks one per request.

import type { Model } from '../native/core.js';
import type { WorkerPool } from '../router/worker-pool.js';
import type { Router } from '../router/types.js';
import type { ModelStats } from '../metrics/frontend.js';
import { log } from '../log.js';

export interface ModelInfo {
  /** The context window in tokens: config.json's, else the engine's (GetModelInfo), else null. */
  contextLength: number | null;
  /** Where contextLength came from. */
  contextSource: 'config.json' | 'engine' | null;
  eosTokenIds: number[];
  vocabSize: number;
}

/** The output parsers configured for a model (--tool-call-parser, --reasoning-parser). */
export interface ParserConfig {
  tool: string | null;
  reasoning: string | null;
}

/** The longest prompt accepted while the context length is unknown (--max-prompt-tokens). */
export const DEFAULT_MAX_PROMPT_TOKENS = 131072;

export class ServedModel {
  readonly info: ModelInfo;
  readonly created = Math.floor(Date.now() / 1000);

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
  ) {
    const i = native.info();
    const ctx = i.contextLength ?? null;
    this.info = { contextLength: ctx, contextSource: ctx === null ? null : 'config.json', eosTokenIds: i.eosTokenIds, vocabSize: i.vocabSize };
  }

  /**
   * When the model folder has no config.json context length, take the engine's
   * (GetModelInfo max_context_length) from the first worker that answers. Workers that
   * fail or report 0 are skipped; with none, the context stays unknown and prompts are
   * capped at maxPromptTokens.
   */
  async adoptEngineContext(timeoutMs = 5000): Promise<void> {
    if (this.info.contextLength !== null) return;
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
          return;
        }
      } catch (err) {
        log.debug(`model ${this.name}: GetModelInfo from worker ${w.id} failed: ${(err as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    }
    // (No worker URL here: the log line is read by people and by scripts that look for the listen address.)
    log.info(`model ${this.name}: context length unknown (no config.json, no GetModelInfo answer); prompts are capped at ${this.maxPromptTokens} tokens (--max-prompt-tokens)`);
  }
}
