// The embedded mock engines of --mock: started once per process (by ./serve.ts, or by
// the shards' supervisor), whatever the shard count.

import { resolve } from 'node:path';
import { Model } from '../native/core.js';
import { startMockEngine } from '../mock/engine-server.js';
import { modelName, type ServeOptions } from './options.js';

/** The embedded mock engines of --mock (once per process, whatever the shard count). */
export async function startMocks(o: ServeOptions, native?: Model): Promise<{ urls: string[]; close(): Promise<void> }> {
  const mocks: Awaited<ReturnType<typeof startMockEngine>>[] = [];
  if (o.mock) {
    const info = (native ?? Model.load(resolve(o.modelPath))).info();
    const name = modelName(o);
    for (let i = 0; i < o.mockWorkers; i++) {
      mocks.push(await startMockEngine({ port: 0, mode: o.mock, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: name }));
    }
  }
  return { urls: mocks.map((m) => m.url), close: async () => void (await Promise.all(mocks.map((m) => m.close()))) };
}
