// The mock engine's graceful drain (MockEngine.drain, `portico mock-engine` on SIGTERM), on
// both protocols, through a plain gRPC client: new Generates are refused UNAVAILABLE, HealthCheck
// says not serving, a request that finishes within the grace finishes, and one still running
// after it ends with UNAVAILABLE "the engine is shutting down".

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';

import { SglangScheduler } from '../src/gen/sglang_scheduler_pb.js';
import { VllmEngine } from '../src/gen/vllm_engine_pb.js';
import { startMockEngine } from '../src/mock/engine-server.js';

const EOS = [2];

/** A Generate stream's ids, and how it ended (null: ok). */
async function generate(client: ReturnType<typeof clients>, id: string, maxTokens: number, onMessage?: () => void): Promise<{ ids: number[]; error: ConnectError | null }> {
  const ids: number[] = [];
  try {
    for await (const m of client.generate(id, maxTokens)) {
      ids.push(...m);
      onMessage?.();
    }
    return { ids, error: null };
  } catch (err) {
    return { ids, error: ConnectError.from(err) };
  }
}

function clients(protocol: 'sglang' | 'vllm', port: number) {
  const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` });
  if (protocol === 'sglang') {
    const c = createClient(SglangScheduler, transport);
    return {
      async *generate(id: string, max: number): AsyncGenerator<number[]> {
        for await (const r of c.generate({ requestId: id, tokenized: { inputIds: [5, 6, 7] }, samplingParams: { maxNewTokens: max, ignoreEos: true }, stream: true })) {
          if (r.response.case === 'chunk') yield r.response.value.tokenIds;
        }
      },
      health: async () => c.healthCheck({}),
    };
  }
  const c = createClient(VllmEngine, transport);
  return {
    async *generate(id: string, max: number): AsyncGenerator<number[]> {
      for await (const r of c.generate({ requestId: id, input: { case: 'tokenized', value: { inputIds: [5, 6, 7] } }, samplingParams: { maxTokens: max, ignoreEos: true }, stream: true })) {
        if (r.response.case === 'chunk') yield r.response.value.tokenIds;
      }
    },
    health: async () => c.healthCheck({}),
  };
}

for (const protocol of ['sglang', 'vllm'] as const) {
  test(`${protocol}: drain refuses new requests, lets the grace finish what it can, ends the rest UNAVAILABLE`, async () => {
    const engine = await startMockEngine({ port: 0, mode: 'sim', protocol, eosTokenIds: EOS, vocabSize: 1000, deterministic: true, stepMs: 10 });
    const client = clients(protocol, engine.port);
    try {
      assert.equal((await client.health()).healthy, true);
      // A long request (it outlives the grace) and a short one (it finishes within it).
      let started!: () => void;
      const going = new Promise<void>((r) => (started = r));
      const long = generate(client, 'long', 100_000, () => started());
      await going;
      let shortStarted!: () => void;
      const shortGoing = new Promise<void>((r) => (shortStarted = r));
      const short = generate(client, 'short', 20, () => shortStarted());
      await shortGoing;
      const drained = engine.drain(4000);
      const refused = await generate(client, 'late', 5);
      assert.equal(refused.error?.code, Code.Unavailable);
      assert.equal(refused.error?.rawMessage, 'the engine is shutting down');
      const h = await client.health();
      assert.equal(h.healthy, false);
      assert.equal(h.message, 'the engine is shutting down');
      const s = await short;
      assert.equal(s.error, null, 'a request that finishes within the grace finishes');
      assert.equal(s.ids.length, 20);
      const l = await long;
      assert.equal(l.error?.code, Code.Unavailable, String(l.error));
      assert.equal(l.error?.rawMessage, 'the engine is shutting down');
      assert.ok(l.ids.length > 0);
      assert.equal(await drained, 1, 'one request was still running when the grace ended');
    } finally {
      await engine.close();
    }
  });
}
