// A model as served: its name, its native tokenizer/template/model card, the workers
// that generate for it and the router that picks one per request.

import type { Model } from '../native/core.js';
import type { WorkerPool } from '../router/worker-pool.js';
import type { Router } from '../router/types.js';
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
    /** Picks the worker of each request among `pool`'s (the caller builds it over that pool). */
    readonly router: Router,
    readonly stats: ModelStats,
    readonly parsers: ParserConfig = { tool: null, reasoning: null },
  ) {
    const i = native.info();
    this.info = { contextLength: i.contextLength ?? null, eosTokenIds: i.eosTokenIds, vocabSize: i.vocabSize };
  }
}
