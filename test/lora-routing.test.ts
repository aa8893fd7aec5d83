// A LoRA adapter's KV blocks live in a namespace of their own (issue 17): through the one
// generation path (pipeline/generate.ts) over a kv-mode router on fake workers, a prompt
// the base model has sent is predicted cached for the base model only; the adapter's first
// request with it matches nothing, its second matches its own blocks, and the adapter id
// reaches the engine as GenerateParams.loraId (absent for the base model).

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Model } from '../src/native/core.js';
import { WorkerPool } from '../src/router/worker-pool.js';
import { ModelRouter } from '../src/router/router.js';
import { ServedModel } from '../src/pipeline/served-model.js';
import { generate } from '../src/pipeline/generate.js';
import { FrontendMetrics, modelStats } from '../src/metrics/frontend.js';
import type { EngineClient, EngineEvent, GenerateParams } from '../src/engine/types.js';
import { QWEN3 } from './helpers/portico.js';

const BS = 4;

function fakeClient(i: number, sent: GenerateParams[]): EngineClient {
  return {
    url: `grpc://fake-${i}:1`,
    health: async () => true,
    serverInfo: async () => ({ maxTotalNumTokens: 1600 }),
    generate(p: GenerateParams): AsyncIterable<EngineEvent> {
      sent.push(p);
      return (async function* () {
        yield { kind: 'done', done: { finishReason: 'stop', promptTokens: p.inputIds.length, completionTokens: 1, cachedTokens: 0, index: 0, outputIds: [7] } } as EngineEvent;
      })();
    },
    close() {},
  } as unknown as EngineClient;
}

test("an adapter's blocks never match its base model's, and its id reaches the engine", async () => {
  const sent: GenerateParams[] = [];
  const pool = new WorkerPool([fakeClient(0, sent), fakeClient(1, sent)], { model: 'base' });
  for (const w of pool.workers) w.healthy = true;
  const router = new ModelRouter(pool, { mode: 'kv', blockSize: BS, kvEvents: false });
  const metrics = new FrontendMetrics();
  const base = new ServedModel('base', Model.load(QWEN3), pool, router, modelStats(metrics, 'base'));
  const adapter = base.adapterView('ad', '/adapters/ad', modelStats(metrics, 'ad'));
  const prompt = Uint32Array.from({ length: 8 * BS }, (_, i) => 100 + i);

  const run = async (m: ServedModel, id: string) => {
    const gen = generate(m, prompt, { n: 1, maxTokens: 1 }, id, AbortSignal.timeout(10_000));
    for await (const _ of gen.events) void _;
    return gen;
  };
  const first = await run(base, 'b1');
  assert.equal(first.overlapBlocks, 0);
  const again = await run(base, 'b2');
  assert.equal(again.overlapBlocks, 8, 'the base model predicts its own blocks on the worker it used');
  const a1 = await run(adapter, 'a1');
  assert.equal(a1.overlapBlocks, 0, "the adapter matches none of the base model's blocks");
  const a2 = await run(adapter, 'a2');
  assert.equal(a2.overlapBlocks, 8, 'its second request matches its own');
  assert.deepEqual(sent.map((p) => [p.requestId, p.loraId]), [['b1', undefined], ['b2', undefined], ['a1', 'ad'], ['a2', 'ad']]);
  router.close();
  pool.close();
});
