// vLLM's engine protocol (client ⇄ mock), the URL-scheme factory, and workers
// that stop answering mid-stream.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';

import { EngineError } from '../src/engine/errors.js';
import { createEngineClient, protocolOf } from '../src/engine/factory.js';
import { SglangEngineClient } from '../src/engine/sglang-client.js';
import type { EngineClient, EngineEvent, GenerateDone, GenerateParams, TokenChunk } from '../src/engine/types.js';
import { buildVllmGenerateRequest, VllmEngineClient } from '../src/engine/vllm-client.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { HANG_GUARD_MS, eventually } from './helpers/eventually.js';
import { collect } from './helpers/engine-events.js';

const EOS = 99;


const params = (over: Partial<GenerateParams> & { inputIds: Uint32Array }): GenerateParams => ({
  requestId: `v-${Math.random().toString(36).slice(2)}`,
  stream: true,
  ...over,
});
const never = () => new AbortController().signal;

describe('URL scheme picks the protocol', () => {
  test('grpc:// is SGLang, vllm+grpc:// is vLLM, others are refused', () => {
    assert.equal(protocolOf('grpc://h:1'), 'sglang');
    assert.equal(protocolOf('sglang+grpc://h:1'), 'sglang');
    assert.equal(protocolOf('vllm+grpc://h:1'), 'vllm');
    assert.ok(createEngineClient('vllm+grpc://127.0.0.1:1') instanceof VllmEngineClient);
    assert.ok(createEngineClient('grpc://127.0.0.1:1') instanceof SglangEngineClient);
    assert.throws(() => createEngineClient('tcp://h:1'), EngineError);
  });

  test('vLLM request mapping: max_tokens, top_k 0 = off, seed travels', () => {
    const r = buildVllmGenerateRequest({ requestId: 'x', inputIds: Uint32Array.from([1, 2]), stream: true, seed: 42n, maxNewTokens: 9 });
    assert.equal(r.input.case, 'tokenized');
    const s = r.samplingParams!;
    assert.equal(s.topK, 0);
    assert.equal(s.topP, 1);
    assert.equal(s.repetitionPenalty, 1);
    assert.equal(s.maxTokens, 9);
    assert.equal(s.seed, 42);
  });
});

describe('vLLM protocol against the mock', () => {
  let echo: MockEngine;
  let sim: MockEngine;
  let e: EngineClient;
  let s: EngineClient;
  before(async () => {
    echo = await startMockEngine({ port: 0, mode: 'echo', protocol: 'vllm', eosTokenIds: [EOS], vocabSize: 100, servedModelName: 'v-echo' });
    sim = await startMockEngine({
      port: 0, mode: 'sim', protocol: 'vllm', eosTokenIds: [EOS], vocabSize: 100, stepMs: 1, prefillMsPerToken: 0,
      eosProbability: 0, maxRunningRequests: 1, reasoningParser: 'qwen3', streamInterval: 3,
    });
    assert.match(echo.url, /^vllm\+grpc:\/\//);
    e = createEngineClient(echo.url);
    s = createEngineClient(sim.url);
  });
  after(async () => {
    e.close();
    s.close();
    await echo.close();
    await sim.close();
  });

  test('echo round trip: ids back in order, usage totals, stop', async () => {
    const ids = [5, 17, 3, 42, 8];
    const r = await collect(e.generate(params({ inputIds: Uint32Array.from(ids) }), never()));
    assert.deepEqual(r.tokens, ids);
    assert.deepEqual(r.chunks.map((c) => c.completionTokens), [1, 2, 3, 4, 5], 'deltas summed into running totals');
    assert.equal(r.done.length, 1);
    assert.equal(r.done[0]!.finishReason, 'stop');
    assert.equal(r.done[0]!.completionTokens, 5);
    assert.equal(r.done[0]!.promptTokens, 5);
    assert.deepEqual(r.done[0]!.outputIds, []);
  });

  test('stream=false: one done with every id; n=2 indexes', async () => {
    const r = await collect(e.generate(params({ inputIds: Uint32Array.from([9, 8, 7]), stream: false }), never()));
    assert.equal(r.chunks.length, 0);
    assert.deepEqual(r.done[0]!.outputIds, [9, 8, 7]);
    assert.equal(r.done[0]!.completionTokens, 3);
    const n2 = await collect(e.generate(params({ inputIds: Uint32Array.from([4, 5]), n: 2 }), never()));
    assert.deepEqual(n2.done.map((d) => d.index).sort(), [0, 1]);
    assert.deepEqual(n2.tokens, [4, 4, 5, 5]);
  });

  test('several tokens per message (stream interval 3); totals stay right', async () => {
    const r = await collect(s.generate(params({ inputIds: Uint32Array.from([1, 2, 3]), maxNewTokens: 40 }), never()));
    assert.equal(r.tokens.length, 40);
    assert.deepEqual(r.chunks.map((c) => c.tokenIds.length), [...Array(13).fill(3), 1]);
    let sum = 0;
    for (const c of r.chunks) {
      sum += c.tokenIds.length;
      assert.equal(c.completionTokens, sum);
    }
    assert.equal(r.done[0]!.completionTokens, 40);
    assert.equal(r.done[0]!.finishReason, 'length');
  });

  test('seed makes tokens reproducible across request ids', async () => {
    const a = await collect(s.generate(params({ inputIds: Uint32Array.from([1]), maxNewTokens: 8, seed: 5n }), never()));
    const b = await collect(s.generate(params({ inputIds: Uint32Array.from([1]), maxNewTokens: 8, seed: 5n }), never()));
    assert.deepEqual(a.tokens, b.tokens);
  });

  test('abort rpc ends the stream with finish "abort"; caller abort throws aborted', async () => {
    const p = params({ inputIds: Uint32Array.from([1]), maxNewTokens: 10_000 });
    const events: EngineEvent[] = [];
    for await (const ev of s.generate(p, never())) {
      events.push(ev);
      if (events.length === 3) await s.abort(p.requestId);
    }
    const last = events.at(-1)!;
    assert.equal(last.kind === 'done' && last.done.finishReason, 'abort');
    const ac = new AbortController();
    await assert.rejects(
      (async () => {
        let k = 0;
        for await (const ev of s.generate(params({ inputIds: Uint32Array.from([1]), maxNewTokens: 10_000 }), ac.signal)) {
          if (ev.kind === 'chunk' && ++k === 3) ac.abort();
        }
      })(),
      (err: unknown) => err instanceof EngineError && err.code === 'aborted',
    );
    await eventually(() => sim.core.active === 0, 'the abort reached the engine');
    assert.equal(sim.core.active, 0);
    assert.equal(sim.core.ranks[0]!.pool.usedBlocks(), 0);
  });

  test('health, model info, server info (block size, parser), loads', async () => {
    assert.equal(await s.health(), true);
    const mi = await e.modelInfo();
    assert.equal(mi.servedModelName, 'v-echo');
    assert.deepEqual(mi.eosTokenIds, [EOS]);
    const si = await s.serverInfo();
    assert.equal(si.engineVersion, 'vllm-grpc');
    assert.equal(si.serverArgs['block_size'], 16);
    assert.equal(si.serverArgs['max_num_seqs'], 1);
    assert.equal(si.serverArgs['engine_reasoning_parser'], 'qwen3');
    const a = new AbortController();
    const b = new AbortController();
    const pa = collect(s.generate(params({ inputIds: Uint32Array.from({ length: 40 }, (_, i) => i) , maxNewTokens: 10_000 }), a.signal)).catch(() => undefined);
    const pb = collect(s.generate(params({ inputIds: Uint32Array.from([1]), maxNewTokens: 10_000 }), b.signal)).catch(() => undefined);
    await eventually(async () => (await s.loads()).waitingRequests === 1, 'the second request is waiting');
    const l = await s.loads();
    assert.equal(l.runningRequests, 1);
    assert.equal(l.waitingRequests, 1);
    assert.ok(l.perRank[0]!.usedTokens >= 48, 'KV held by the running request');
    assert.ok(l.tokenUsage > 0);
    a.abort();
    b.abort();
    await Promise.all([pa, pb]);
  });
});

/** A TCP relay that can stop relaying: the worker looks alive but never answers. */
async function blackholeProxy(target: number) {
  let frozen = false;
  const pairs: net.Socket[] = [];
  const srv = net.createServer((c) => {
    const up = net.connect(target, '127.0.0.1');
    pairs.push(c, up);
    c.on('data', (d) => { if (!frozen) up.write(d); });
    up.on('data', (d) => { if (!frozen) c.write(d); });
    c.on('error', () => up.destroy());
    up.on('error', () => c.destroy());
    c.on('close', () => up.destroy());
    up.on('close', () => c.destroy());
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    port: (srv.address() as net.AddressInfo).port,
    freeze: () => { frozen = true; },
    close: () => new Promise<void>((r) => { for (const s of pairs) s.destroy(); srv.close(() => r()); }),
  };
}

describe('a worker that stops answering', () => {
  for (const protocol of ['sglang', 'vllm'] as const) {
    test(`${protocol}: in-flight streams end with a clear error, not a hang`, async () => {
      const mock = await startMockEngine({ port: 0, mode: 'sim', protocol, eosTokenIds: [EOS], vocabSize: 100, stepMs: 5, eosProbability: 0 });
      const proxy = await blackholeProxy(mock.port);
      const scheme = protocol === 'vllm' ? 'vllm+grpc' : 'grpc';
      const client = createEngineClient(`${scheme}://127.0.0.1:${proxy.port}`, { pingIntervalMs: 200, pingTimeoutMs: 200, rpcTimeoutMs: 300 });
      let frozenAt = 0;
      try {
        const run = (id: string) => collect((async function* () {
          let n = 0;
          for await (const ev of client.generate(params({ requestId: id, inputIds: Uint32Array.from([1, 2]), maxNewTokens: 100_000 }), never())) {
            if (ev.kind === 'chunk' && ++n === 3 && !frozenAt) {
              frozenAt = Date.now();
              proxy.freeze();
            }
            yield ev;
          }
        })());
        const results = await Promise.allSettled([run('h1'), run('h2')]);
        const took = Date.now() - frozenAt;
        for (const r of results) {
          assert.equal(r.status, 'rejected');
          const err = (r as PromiseRejectedResult).reason;
          assert.ok(err instanceof EngineError, String(err));
          assert.ok(err.code === 'unavailable' || err.code === 'timeout', err.code);
          assert.match(err.message, /127\.0\.0\.1/);
        }
        assert.ok(took < HANG_GUARD_MS, `ended ${took} ms after the worker went silent`); // a hang guard: without the PING deadline it never ends
        assert.equal(await client.health(), false);
      } finally {
        client.close();
        await proxy.close();
        await mock.close();
      }
    });
  }
});
