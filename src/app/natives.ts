// Each served model's native tokenizer, chat template and model card, loaded once per
// thread (the main thread, or each shard thread).

import { resolve } from 'node:path';
import { Model } from '../native/core.js';
import type { ServeOptions } from './options.js';

/** By model name. */
export function loadModels(o: ServeOptions): Map<string, Model> {
  return new Map(o.models.map((m) => [m.name, Model.load(resolve(m.path))]));
}
