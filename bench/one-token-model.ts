// A served model for in-process benches of the request loop: one worker whose engine client
// answers every Generate at once with one token and its end, over the Qwen3 tokenizer, routed
// round-robin. What runGeneration costs around the engine, with no socket in the way.

import { Model } from '../src/native/core.js';
import { WorkerPool } from '../src/router/worker-pool.js';
import { ModelRouter } from '../src/router/router.js';
import { ServedModel } from '../src/pipeline/served-model.js';
import { FrontendMetrics, modelStats } from '../src/metrics/frontend.js';
import type { EngineClient, EngineEvent, GenerateParams } from '../src/engine/types.js';
import { QWEN3 } from './wrk-harness.js';

const events = (p: GenerateParams): EngineEvent[] => [
  { kind: 'chunk', chunk: { tokenIds: [1000], promptTokens: p.inputIds.length, completionTokens: 1, cachedTokens: 0, index: 0 } },
  { kind: 'done', done: { finishReason: 'length', promptTokens: p.inputIds.length, completionTokens: 1, cachedTokens: 0, index: 0, outputIds: [] } },
];

const client = {
  url: 'grpc://bench:1',
  health: async () => true,
  serverInfo: async () => ({ maxTotalNumTokens: 1e6, serverArgs: {}, disaggregation: { role: null } }),
  close() {},
  generate(p: GenerateParams): AsyncIterable<EngineEvent> {
    const evs = events(p);
    let i = 0;
    return {
      [Symbol.asyncIterator]() {
        return {
          next: async () => (i < evs.length ? { value: evs[i++]!, done: false } : { value: undefined, done: true }),
          return: async () => ({ value: undefined, done: true }),
        } as AsyncIterator<EngineEvent>;
      },
    };
  },
} as unknown as EngineClient;

export function oneTokenModel(): ServedModel {
  const pool = new WorkerPool([client], { model: 'm' });
  for (const w of pool.workers) w.healthy = true;
  return new ServedModel('m', Model.load(QWEN3), pool, new ModelRouter(pool, { mode: 'round-robin' }), modelStats(new FrontendMetrics(), 'm'));
}
