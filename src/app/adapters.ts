// --lora NAME=PATH@BASE: the startup adapters, loaded on their base model's workers once
// the frontend's models are up (each shard registers its own; the engines load each
// adapter once, see src/api/adapters.ts).

import { loadStartupAdapter } from '../api/adapters.js';
import type { AppContext } from '../api/context.js';
import type { LoraSpec } from './options.js';

export async function loadStartupAdapters(ctx: AppContext, loras: readonly LoraSpec[]): Promise<void> {
  for (const l of loras) {
    try {
      await loadStartupAdapter(ctx, { name: l.name, path: l.path, base: l.base });
    } catch (err) {
      throw new Error(`--lora ${l.name}=${l.path}@${l.base}: ${(err as Error).message}`);
    }
  }
}
