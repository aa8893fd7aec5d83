// Starting the configured chat processor on this server thread: resolve the provider, call
// it once as spec 002 says, with the frontend's configuration and then the
// --chat-processor-config object, and give each served model a slot that the factory
// fills when the model's first worker registers and refills on card changes.

import { resolve } from 'node:path';
import type { ServedModel } from '../pipeline/served-model.js';
import { ProcessorSlot, type Backoff } from './lifecycle.js';
import { resolveProcessor } from './resolve.js';
import type { FrontendConfig } from './contract.js';

export interface ProcessorSettings {
  /** --chat-processor (absent or 'portico': none). */
  name?: string;
  /** The provider's first argument: the frontend's resolved configuration, secrets left out. */
  frontendConfig?: Record<string, unknown>;
  /** The provider's second argument: --chat-processor-config, parsed (a JSON object). */
  options?: Record<string, unknown>;
  /** Factory retry delays (tests shorten nothing; the defaults apply unless given). */
  backoff?: Backoff;
}

export interface StartedProcessors {
  /** Model name → its slot. */
  readonly slots: ReadonlyMap<string, ProcessorSlot>;
  close(): void;
}

export async function startProcessors(s: ProcessorSettings, models: ReadonlyMap<string, ServedModel>, modelDirs: ReadonlyMap<string, string>): Promise<StartedProcessors | null> {
  if (!s.name) return null;
  const provider = await resolveProcessor(s.name);
  if (!provider) return null;
  const config = deepFreeze(structuredClone({ ...s.frontendConfig, 'chat-processor': s.name })) as FrontendConfig;
  const factory = await provider(config, s.options ?? {});
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

/** The frontend's configuration is read-only to a processor (it is every model's, on every shard). */
function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
