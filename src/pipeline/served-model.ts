// A model as served: its name, its native tokenizer/template/model card, and the
// workers that generate for it.

import type { Model } from '../native/core.js';
import type { WorkerPool } from '../router/worker-pool.js';
import type { ModelStats } from '../metrics/frontend.js';

export interface ModelInfo {
  contextLength: number | null;
  eosTokenIds: number[];
  vocabSize: number;
}

/** The output parsers configured for a model (--tool-call-parser, --reasoning-parser). */
export interface ParserConfig {
  tool: string | null;
  reasoning: string | null;
}

export class ServedModel {
  readonly info: ModelInfo;
  readonly created = Math.floor(Date.now() / 1000);

  constructor(
    readonly name: string,
    readonly native: Model,
    readonly pool: WorkerPool,
    readonly stats: ModelStats,
    readonly parsers: ParserConfig = { tool: null, reasoning: null },
  ) {
    const i = native.info();
    this.info = { contextLength: i.contextLength ?? null, eosTokenIds: i.eosTokenIds, vocabSize: i.vocabSize };
  }
}
