// The embedded mock engines of --mock: --mock-workers per model, started once per process
// (by ./serve.ts, or by the shards' supervisor), whatever the shard count. Each reports
// its model's name, EOS ids and vocabulary size.

import { resolve } from 'node:path';
import { Model } from '../native/core.js';
import { startMockEngine } from '../mock/engine-server.js';
import type { ModelSpec, ServeOptions } from './options.js';

/** Starts the mock engines of --mock and returns `o.models` with their URLs among each model's workers. */
export async function startMocks(o: ServeOptions, natives?: ReadonlyMap<string, Model>): Promise<{ models: ModelSpec[]; close(): Promise<void> }> {
  const mocks: Awaited<ReturnType<typeof startMockEngine>>[] = [];
  const close = async () => void (await Promise.all(mocks.map((m) => m.close())));
  if (!o.mock) return { models: o.models, close };
  try {
    const models: ModelSpec[] = [];
    for (const spec of o.models) {
      const info = (natives?.get(spec.name) ?? Model.load(resolve(spec.path))).info();
      const urls: string[] = [];
      for (let i = 0; i < o.mockWorkers; i++) {
        const m = await startMockEngine({ port: 0, mode: o.mock, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: spec.name });
        mocks.push(m);
        urls.push(m.url);
      }
      models.push({ ...spec, workers: [...spec.workers, ...urls] });
    }
    return { models, close };
  } catch (err) {
    await close();
    throw err;
  }
}
