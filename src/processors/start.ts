// Starting the configured chat processor on this server thread: resolve the provider, call
// it once with the --chat-processor-config object, and give each served model a slot that
// the factory fills when the model's first worker registers and refills on card changes.

import { resolve } from 'node:path';
import type { ServedModel } from '../pipeline/served-model.js';
import { ProcessorSlot, type Backoff } from './lifecycle.js';
import { resolveProcessor } from './resolve.js';

export interface ProcessorSettings {
  /** --chat-processor (absent or 'portico': none). */
  name?: string;
  /** --chat-processor-config, parsed (a JSON object). */
  config?: Record<string, unknown>;
  /** Factory retry delays (tests shorten nothing; the defaults apply unless given). */
  backoff?: Backoff;
}

export interface StartedProcessors {
  /** Model name → its slot. */
  readonly slots: ReadonlyMap<string, ProcessorSlot>;
  close(): void;
}

export async function startProcessors(s: ProcessorSettings, models: ReadonlyMap<string, ServedModel>, modelDirs: ReadonlyMap<string, string>, serveOptions: Record<string, unknown>): Promise<StartedProcessors | null> {
  if (!s.name) return null;
  const provider = await resolveProcessor(s.name);
  if (!provider) return null;
  const factory = await provider(s.config ?? {}, Object.freeze({ name: s.name, models: [...models.keys()], serve: Object.freeze({ ...serveOptions }) }));
  if (typeof factory !== 'function') throw new Error(`chat processor '${s.name}': the provider must return a factory function, got ${typeof factory}`);
  const slots = new Map<string, ProcessorSlot>();
  for (const [name, model] of models) {
    const slot = new ProcessorSlot(model, factory, resolve(modelDirs.get(name) ?? '.'), s.backoff);
    slots.set(name, slot);
    model.pool.onWorkersChanged(() => slot.workersChanged());
    slot.workersChanged();
  }
  return {
    slots,
    close() {
      for (const slot of slots.values()) slot.close();
    },
  };
}
