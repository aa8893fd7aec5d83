// Each served model's native tokenizer, chat template and model card, loaded once per
// thread (the main thread, or each shard thread).

import { resolve } from 'node:path';
import { Model } from '../native/core.js';
import { chatTemplateOverride } from './chat-template.js';
import type { ServeOptions } from './options.js';

/** By model name; a model's `chatTemplate` (else --chat-template) replaces its folder's template. */
export function loadModels(o: ServeOptions): Map<string, Model> {
  return new Map(
    o.models.map((m) => {
      const file = m.chatTemplate ?? o.chatTemplate;
      return [m.name, Model.load(resolve(m.path), file ? chatTemplateOverride(file) : null)];
    }),
  );
}
