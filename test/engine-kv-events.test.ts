// KV events: the simulator publishes them (gRPC stream, ZMQ), Portico ingests
// them; replaying the stream must give exactly the pool's cached blocks.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { encode } from '@msgpack/msgpack';

import { createEngineClient } from '../src/engine/factory.js';
import {
  decodeVllmBatch,
  GrpcKvEventSubscriber,
  KvBlockSet,
  ZmqKvEventSubscriber,
  type KvEvent,
  type WorkerLoad,
} from '../src/engine/kv-events/index.js';
import type { EngineClient } from '../src/engine/types.js';
import { startMockEngine, type MockEngine, type MockEngineOptions } from '../src/mock/engine-server.js';

const waitFor = async (cond: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
};

const simOpts = (over: Partial<MockEngineOptions> = {}): MockEngineOptions => ({
  port: 0, mode: 'sim', eosTokenIds: [99], vocabSize: 100, eosProbability: 0,
  speedupRatio: 1000, blockSize: 4, numBlocks: 24, ...over,
});

/** Prompts sharing prefixes, enough to evict from a 24-block pool. */
async function traffic(client: EngineClient, rounds: number, tag: string) {
  const jobs: Promise<void>[] = [];
  for (let i = 0; i < rounds; i++) {
    const prefix = Array.from({ length: 8 }, (_, k) => (i % 3) * 10 + k);
    const prompt = Uint32Array.from([...prefix, ...Array.from({ length: 5 + (i % 7) }, (_, k) => 50 + ((i * 7 + k) % 40))]);
    jobs.push((async () => {
      for await (const _ of client.generate({ requestId: `${tag}-${i}`, inputIds: prompt, maxNewTokens: 6, stream: true }, new AbortController().signal)) {
        // drain
      }
    })());
    if (i % 4 === 3) await Promise.all(jobs.splice(0));
  }
  await Promise.all(jobs);
}

const poolHashes = (m: MockEngine) => new Set([...m.core.ranks[0]!.pool.cachedHashes()].map((h) => BigInt(h)));

describe('KV events over gRPC (SubscribeKvEvents)', () => {
  for (const protocol of ['sglang', 'vllm'] as const) {
    test(`${protocol}: replayed events mirror the pool exactly, through evictions`, async () => {
      const mock = await startMockEngine(simOpts({ protocol }));
      const client = createEngineClient(mock.url);
      const set = new KvBlockSet();
      let removed = 0;
      const loads: WorkerLoad[] = [];
      const sub = new GrpcKvEventSubscriber({
        url: mock.url,
        onLoad: (l) => loads.push(l),
        sink: (e) => {
          removed += e.filter((x) => x.kind === 'removed').length;
          set.apply(e);
        },
      });
      try {
        sub.start();
        assert.ok(await waitFor(() => set.resets.get('connect') === 1, 30_000), 'connected with a clean start');
        await traffic(client, 24, protocol);
        assert.ok(await waitFor(() => sub.stats.lastSeq === mock.core.hub.lastSeq(), 30_000), 'caught up');
        assert.ok(removed > 0, 'the pool evicted blocks');
        // Live batches carry the rank's load.
        assert.ok(loads.length > 0);
        assert.equal(loads.at(-1)!.capacityTokens, 96);
        assert.ok(loads.some((l) => l.runningRequests > 0 && (l.activeTokenUsage ?? 0) > 0));
        assert.ok(loads.every((l, i) => i === 0 || l.sample > loads[i - 1]!.sample));
        assert.deepEqual(set.hashes(mock.url), poolHashes(mock));
        assert.ok(set.size(mock.url) > 0);
        assert.equal(sub.stats.gaps, 0);
      } finally {
        sub.close();
        client.close();
        await mock.close();
      }
    });
  }

  test('a late subscriber starts from a snapshot of the cache', async () => {
    const mock = await startMockEngine(simOpts());
    const client = createEngineClient(mock.url);
    await traffic(client, 8, 'pre');
    const set = new KvBlockSet();
    const sub = new GrpcKvEventSubscriber({ url: mock.url, sink: (e) => set.apply(e) });
    try {
      sub.start();
      assert.ok(await waitFor(() => set.size(mock.url) > 0, 30_000));
      assert.deepEqual(set.hashes(mock.url), poolHashes(mock));
    } finally {
      sub.close();
      client.close();
      await mock.close();
    }
  });

  test('a sequence gap triggers a resync (reset + snapshot), after which the view is exact', async () => {
    const mock = await startMockEngine(simOpts());
    const client = createEngineClient(mock.url);
    const set = new KvBlockSet();
    const sub = new GrpcKvEventSubscriber({ url: mock.url, sink: (e) => set.apply(e) });
    try {
      sub.start();
      await traffic(client, 4, 'a');
      assert.ok(await waitFor(() => sub.stats.lastSeq === mock.core.hub.lastSeq(), 30_000));
      mock.core.hub.dropNext();
      await traffic(client, 6, 'b');
      assert.ok(await waitFor(() => sub.stats.gaps === 1 && sub.stats.connects === 2, 30_000), 'gap seen, resubscribed');
      assert.ok(await waitFor(() => sub.stats.lastSeq === mock.core.hub.lastSeq(), 30_000));
      assert.equal(set.resets.get('gap'), 1);
      assert.deepEqual(set.hashes(mock.url), poolHashes(mock));
    } finally {
      sub.close();
      client.close();
      await mock.close();
    }
  });

  test('a worker that restarts (same address, empty cache) is seen clean', async () => {
    let mock = await startMockEngine(simOpts());
    const port = mock.port;
    let client = createEngineClient(mock.url);
    const url = mock.url;
    const set = new KvBlockSet();
    const seen: KvEvent[] = [];
    const sub = new GrpcKvEventSubscriber({ url, sink: (e) => { seen.push(...e); set.apply(e); }, retryMs: 50 });
    try {
      sub.start();
      await traffic(client, 4, 'a');
      assert.ok(await waitFor(() => set.size(url) > 0, 30_000));
      client.close();
      await mock.close();
      assert.ok(await waitFor(() => set.size(url) === 0, 30_000), 'a lost worker is forgotten');
      mock = await startMockEngine(simOpts({ port }));
      client = createEngineClient(mock.url);
      assert.ok(await waitFor(() => (set.resets.get('reconnect') ?? 0) >= 1, 30_000), 'reconnected');
      await traffic(client, 2, 'b');
      assert.ok(await waitFor(() => sub.stats.lastSeq === mock.core.hub.lastSeq(), 30_000));
      assert.deepEqual(set.hashes(url), poolHashes(mock));
    } finally {
      sub.close();
      client.close();
      await mock.close();
    }
  });
});

describe("KV events over ZMQ (vLLM's publisher format)", () => {
  for (const layout of ['array', 'map'] as const) {
    test(`${layout} layout: ingested events mirror the pool`, async () => {
      const mock = await startMockEngine(simOpts({
        kvEventsZmq: { endpoint: 'tcp://127.0.0.1:*', replayEndpoint: 'tcp://127.0.0.1:*', topic: 'kv', layout },
      }));
      const client = createEngineClient(mock.url);
      const set = new KvBlockSet();
      const sub = new ZmqKvEventSubscriber({
        endpoint: mock.zmq!.endpoint, replayEndpoint: mock.zmq!.replayEndpoint, topic: 'kv', worker: 'w', sink: (e) => set.apply(e),
      });
      try {
        sub.start();
        // PUB/SUB "slow joiner": publish no-op batches (a clear of the empty pool) until
        // the subscriber has seen one, so no real batch is sent before it has joined.
        assert.ok(
          await waitFor(() => {
            if (sub.stats.batches > 0) return true;
            mock.core.hub.add(0, { kind: 'cleared' });
            mock.core.hub.flush(0);
            return false;
          }, 10_000),
          'the subscriber joined',
        );
        await traffic(client, 16, layout);
        assert.ok(await waitFor(() => sub.stats.lastSeq === mock.core.hub.lastSeq(), 30_000), 'caught up');
        assert.deepEqual(set.hashes('w'), poolHashes(mock));
        // Batches lost on the wire: the replay socket supplies them, no reset.
        mock.zmq!.publisher.dropNextSends(2);
        await traffic(client, 4, `${layout}-replay`);
        assert.ok(await waitFor(() => sub.stats.gaps === 1 && sub.stats.lastSeq === mock.core.hub.lastSeq(), 30_000), 'gap filled by replay');
        assert.equal(set.resets.get('gap'), undefined);
        assert.deepEqual(set.hashes('w'), poolHashes(mock));
        // A batch that never existed: the replay cannot supply it, so reset.
        mock.core.hub.dropNext();
        await traffic(client, 4, `${layout}-gap`);
        // The gap is counted when seen; the reset follows once the replay has failed to fill it.
        assert.ok(await waitFor(() => sub.stats.gaps === 2 && set.resets.get('gap') !== undefined, 30_000), 'gap seen and reset');
        assert.equal(set.resets.get('gap'), 1);
      } finally {
        sub.close();
        client.close();
        await mock.close();
      }
    });
  }

  test('decoder: both layouts, uint64 and byte hashes, flat token ids split per block', () => {
    const big = 2n ** 63n + 5n; // above int64: wraps to a negative int64
    const arr = encode([1.5, [['BlockStored', [big, 7], null, [1, 2, 3, 4], 2, null, 'GPU'], ['BlockRemoved', [7]], ['AllBlocksCleared']], 1], { useBigInt64: true });
    const a = decodeVllmBatch(arr, 'w');
    assert.equal(a.dpRank, 1);
    assert.deepEqual(a.events.map((e) => e.kind), ['stored', 'removed', 'cleared']);
    const s = a.events[0] as Extract<KvEvent, { kind: 'stored' }>;
    assert.equal(s.blocks[0]!.hash, BigInt.asIntN(64, big));
    assert.deepEqual(s.blocks.map((b) => b.tokenIds), [[1, 2], [3, 4]]);
    assert.equal(s.parentHash, undefined);

    const map = encode({
      ts: 2, events: [{ type: 'BlockStored', block_hashes: [Uint8Array.from([0, 0, 0, 0, 0, 0, 1, 0, 9])], parent_block_hash: 3, token_ids: [5, 6], block_size: 2, lora_id: null, medium: 'GPU', lora_name: null }, { type: 'SomethingNew' }],
    });
    const m = decodeVllmBatch(map, 'w');
    assert.equal(m.dpRank, 0);
    assert.equal(m.events.length, 1, 'unknown event kinds are skipped');
    const ms = m.events[0] as Extract<KvEvent, { kind: 'stored' }>;
    assert.equal(ms.blocks[0]!.hash, 256n);
    assert.equal(ms.parentHash, 3n);
  });
});
