// A LoRA adapter's KV blocks live in a namespace of their own. Through the one
// generation path (pipeline/generate.ts) over a kv-mode router on fake workers, a prompt
// the base model has sent is predicted cached for the base model only; the adapter's first
// request with it matches nothing, its second matches its own blocks, and the adapter id
// reaches the engine as GenerateParams.loraId (absent for the base model). And from the
// engines' KV events: blocks a worker reports for a named adapter index into that adapter's
// namespace, never the base model's.

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
import { KvIndex } from '../src/router/kv-index.js';
import { WorkerKvIngest } from '../src/router/kv-ingest.js';
import { blockKeys, rootLanes } from '../src/router/hash.js';
import type { KvEvent } from '../src/engine/kv-events/index.js';
import { decodeVllmBatch } from '../src/engine/kv-events/vllm-msgpack.js';
import { normaliseBatch } from '../src/engine/kv-events/grpc-subscriber.js';
import { KvEventBatchSchema } from '../src/gen/common_pb.js';
import { create } from '@bufbuild/protobuf';
import { encode } from '@msgpack/msgpack';

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

test("blocks an engine reports for an adapter are indexed in the adapter's namespace, never the base model's; an adapter named only by number is not indexed", () => {
  const idx = new KvIndex();
  const ing = new WorkerKvIngest(idx, 0, BS);
  const tokens = [1, 2, 3, 4, 5, 6, 7, 8];
  const event = (extra: object): KvEvent => ({ kind: 'stored', worker: 'w', dpRank: 0, parentHash: undefined, blockSize: BS, blocks: [{ hash: 11n, tokenIds: tokens.slice(0, 4) }, { hash: 12n, tokenIds: tokens.slice(4) }], ...extra });
  ing.apply(event({ loraName: 'ad' }));
  const ov = new Uint32Array(1);
  const base = blockKeys(Uint32Array.from(tokens), BS, rootLanes());
  const lora = blockKeys(Uint32Array.from(tokens), BS, rootLanes(undefined, undefined, 'ad'));
  assert.equal(idx.match(base, ov), 0, "the adapter's blocks do not match a base request");
  assert.equal(idx.match(lora, ov), 2, "they match the adapter's own");
  ing.apply({ kind: 'stored', worker: 'w', dpRank: 0, parentHash: 12n, blockSize: BS, blocks: [{ hash: 13n, tokenIds: [9, 10, 11, 12] }] });
  assert.equal(idx.match(blockKeys(Uint32Array.from([...tokens, 9, 10, 11, 12]), BS, rootLanes(undefined, undefined, 'ad')), ov), 3, 'a child follows its parent into the namespace');
  const other = new WorkerKvIngest(idx, 1, BS);
  other.apply(event({ loraUnnamed: true }));
  assert.equal(other.stats.unnamedLora, 1);
  assert.equal(other.blocks, 0);
});

test("the event decoders carry the adapter's name: vLLM's msgpack (array and map layouts) and the gRPC stream", () => {
  const arr = decodeVllmBatch(encode([1, [['BlockStored', [7], null, [1, 2], 2, 3, 'GPU', 'ad']], 0]), 'w').events[0] as Extract<KvEvent, { kind: 'stored' }>;
  assert.equal(arr.loraName, 'ad');
  const map = decodeVllmBatch(encode({ ts: 1, events: [{ type: 'BlockStored', block_hashes: [7], parent_block_hash: null, token_ids: [1, 2], block_size: 2, lora_id: 3, medium: 'GPU', lora_name: null }] }), 'w').events[0] as Extract<KvEvent, { kind: 'stored' }>;
  assert.equal(map.loraName, undefined);
  assert.equal(map.loraUnnamed, true, 'a number without a name');
  const base = decodeVllmBatch(encode([1, [['BlockStored', [7], null, [1, 2], 2, null, 'GPU', null]], 0]), 'w').events[0] as Extract<KvEvent, { kind: 'stored' }>;
  assert.equal(base.loraName, undefined);
  assert.equal(base.loraUnnamed, undefined);
  const batch = create(KvEventBatchSchema, { events: [{ data: { case: 'stored', value: { blocks: [{ blockHash: 5n, tokenIds: [1, 2], blockSize: 2 }], loraName: 'ad' } } }] });
  assert.equal((normaliseBatch(batch, 'w')[0] as Extract<KvEvent, { kind: 'stored' }>).loraName, 'ad');
});
