// Engine client ⇄ mock engine over real gRPC (HTTP/2 on localhost).
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';

import { EngineError } from '../src/engine/errors.js';
import { SglangEngineClient, buildGenerateRequest, toBaseUrl } from '../src/engine/sglang-client.js';
import type { EngineEvent, GenerateDone, GenerateParams } from '../src/engine/types.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { HANG_GUARD_MS } from './helpers/eventually.js';
import { ROOT } from './helpers/portico.js';

const EOS = 99;
const VOCAB = 100;

async function collect(it: AsyncIterable<EngineEvent>) {
  const tokens: number[] = [];
  const chunks: number[][] = [];
  const done: GenerateDone[] = [];
  for await (const ev of it) {
    if (ev.kind === 'chunk') {
      tokens.push(...ev.chunk.tokenIds);
      chunks.push(ev.chunk.tokenIds);
    } else done.push(ev.done);
  }
  return { tokens, chunks, done };
}

const params = (over: Partial<GenerateParams> & { inputIds: Uint32Array }): GenerateParams => ({
  requestId: `req-${Math.random().toString(36).slice(2)}`,
  stream: true,
  ...over,
});

const waitFor = async (cond: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 2));
  }
  return true;
};

describe('echo mock', () => {
  let mock: MockEngine;
  let client: SglangEngineClient;
  before(async () => {
    mock = await startMockEngine({ port: 0, mode: 'echo', eosTokenIds: [EOS], vocabSize: VOCAB, servedModelName: 'mock-echo' });
    client = new SglangEngineClient(mock.url);
  });
  after(async () => {
    client.close();
    await mock.close();
  });

  test('round trip: ids back in order, one per chunk, stop + usage', async () => {
    const ids = [5, 17, 3, 42, 8];
    const r = await collect(client.generate(params({ inputIds: Uint32Array.from(ids) }), new AbortController().signal));
    assert.deepEqual(r.tokens, ids);
    assert.equal(r.chunks.length, ids.length);
    assert.equal(r.done.length, 1);
    const d = r.done[0]!;
    assert.equal(d.finishReason, 'stop');
    assert.equal(d.promptTokens, 5);
    assert.equal(d.completionTokens, 5);
    assert.equal(d.cachedTokens, 0);
    assert.deepEqual(d.outputIds, [], 'stream mode: tokens come only from chunks');
    assert.equal(d.matchedTokenId, undefined);
  });

  test('max_new_tokens → length', async () => {
    const r = await collect(client.generate(
      params({ inputIds: Uint32Array.from([1, 2, 3, 4, 5, 6]), maxNewTokens: 3 }), new AbortController().signal));
    assert.deepEqual(r.tokens, [1, 2, 3]);
    assert.equal(r.done[0]!.finishReason, 'length');
    assert.equal(r.done[0]!.completionTokens, 3);
  });

  test('max_new_tokens = 0 → length with no tokens', async () => {
    const r = await collect(client.generate(
      params({ inputIds: Uint32Array.from([1, 2]), maxNewTokens: 0 }), new AbortController().signal));
    assert.deepEqual(r.tokens, []);
    assert.equal(r.done[0]!.finishReason, 'length');
  });

  test('stream=false: a single done carrying all output ids', async () => {
    const r = await collect(client.generate(
      params({ inputIds: Uint32Array.from([9, 8, 7]), stream: false }), new AbortController().signal));
    assert.equal(r.chunks.length, 0);
    assert.equal(r.done.length, 1);
    assert.deepEqual(r.done[0]!.outputIds, [9, 8, 7]);
    assert.equal(r.done[0]!.finishReason, 'stop');
  });

  test('n = 2: each choice streams and completes with its index', async () => {
    const seen = new Map<number, number[]>();
    const done: GenerateDone[] = [];
    for await (const ev of client.generate(params({ inputIds: Uint32Array.from([4, 5]), n: 2 }), new AbortController().signal)) {
      if (ev.kind === 'chunk') seen.set(ev.chunk.index, [...(seen.get(ev.chunk.index) ?? []), ...ev.chunk.tokenIds]);
      else done.push(ev.done);
    }
    assert.deepEqual(seen.get(0), [4, 5]);
    assert.deepEqual(seen.get(1), [4, 5]);
    assert.deepEqual(done.map((d) => d.index).sort(), [0, 1]);
  });

  test('health, model info, server info, loads', async () => {
    assert.equal(await client.health(), true);
    const mi = await client.modelInfo();
    assert.equal(mi.servedModelName, 'mock-echo');
    assert.equal(mi.vocabSize, VOCAB);
    assert.deepEqual(mi.eosTokenIds, [EOS]);
    assert.ok(mi.maxContextLength > 0);
    assert.equal(mi.supportsVision, false);
    const si = await client.serverInfo();
    assert.equal(si.engineVersion, 'portico-mock');
    assert.equal(si.serverArgs['mode'], 'echo');
    const l = await client.loads();
    assert.equal(l.runningRequests, 0);
    assert.equal(l.waitingRequests, 0);
    assert.equal(l.perRank.length, 1);
  });

  test('abort() of an unknown id does not throw', async () => {
    await client.abort('nope');
  });

  test('a model folder whose config.json has a vision_config is reported as supporting vision', async () => {
    const vl = await startMockEngine({ port: 0, mode: 'echo', eosTokenIds: [EOS], vocabSize: VOCAB, modelPath: `${ROOT}test/fixtures/vllm-tiny-qwen2.5-vl` });
    try {
      assert.equal((await new SglangEngineClient(vl.url).modelInfo()).supportsVision, true);
    } finally {
      await vl.close();
    }
  });
});

describe('sim mock', () => {
  let mock: MockEngine;
  let client: SglangEngineClient;
  before(async () => {
    mock = await startMockEngine({
      port: 0, mode: 'sim', eosTokenIds: [EOS], vocabSize: VOCAB, stepMs: 1, prefillMsPerToken: 0, eosProbability: 0,
      maxRunningRequests: 1,
    });
    client = new SglangEngineClient(mock.url);
  });
  after(async () => {
    client.close();
    await mock.close();
  });

  test('honours max_new_tokens; tokens avoid EOS and stay below it', async () => {
    const r = await collect(client.generate(
      params({ inputIds: Uint32Array.from([1, 2, 3]), maxNewTokens: 20 }), new AbortController().signal));
    assert.equal(r.tokens.length, 20);
    assert.ok(r.tokens.every((t) => t >= 0 && t < EOS));
    assert.equal(r.done[0]!.finishReason, 'length');
    assert.equal(r.done[0]!.completionTokens, 20);
    assert.equal(r.done[0]!.promptTokens, 3);
  });

  test('deterministic for the same request id', async () => {
    const p = { requestId: 'same-id', inputIds: Uint32Array.from([1]), maxNewTokens: 12, stream: true };
    const a = await collect(client.generate(p, new AbortController().signal));
    const b = await collect(client.generate(p, new AbortController().signal));
    assert.deepEqual(a.tokens, b.tokens);
  });

  test('honours stop_token_ids: ends on the first stop id, reports it', async () => {
    const stop = Array.from({ length: 60 }, (_, i) => i); // most of the vocabulary
    const r = await collect(client.generate(
      params({ inputIds: Uint32Array.from([1, 2]), maxNewTokens: 200, stopTokenIds: stop }), new AbortController().signal));
    const d = r.done[0]!;
    assert.equal(d.finishReason, 'stop');
    const last = r.tokens.at(-1)!;
    assert.ok(stop.includes(last));
    assert.equal(d.matchedTokenId, last);
    assert.ok(r.tokens.slice(0, -1).every((t) => !stop.includes(t)));
  });

  test('min_new_tokens holds back stop ids', async () => {
    const stop = Array.from({ length: 90 }, (_, i) => i);
    const r = await collect(client.generate(
      params({ inputIds: Uint32Array.from([1]), maxNewTokens: 50, minNewTokens: 5, stopTokenIds: stop }),
      new AbortController().signal));
    assert.ok(r.tokens.length >= 6, `got ${r.tokens.length}`);
    assert.ok(r.tokens.slice(0, 5).every((t) => !stop.includes(t)));
  });

  test('EOS with matched_token_id; ignore_eos suppresses it', async () => {
    const eosy = await startMockEngine({ port: 0, mode: 'sim', eosTokenIds: [EOS], vocabSize: VOCAB, stepMs: 0, eosProbability: 0.5 });
    const c = new SglangEngineClient(eosy.url);
    try {
      const r = await collect(c.generate(params({ inputIds: Uint32Array.from([1]), maxNewTokens: 100 }), new AbortController().signal));
      assert.equal(r.done[0]!.finishReason, 'stop');
      assert.equal(r.done[0]!.matchedTokenId, EOS);
      assert.equal(r.tokens.at(-1), EOS);
      const ig = await collect(c.generate(
        params({ inputIds: Uint32Array.from([1]), maxNewTokens: 30, ignoreEos: true }), new AbortController().signal));
      assert.equal(ig.tokens.length, 30);
      assert.ok(!ig.tokens.includes(EOS));
    } finally {
      c.close();
      await eosy.close();
    }
  });

  test('AbortSignal mid-stream: worker counts the abort (long before its 10,000 tokens end), iterator throws aborted', async () => {
    const ac = new AbortController();
    const before = mock.stats.aborts;
    let got = 0;
    await assert.rejects(
      (async () => {
        for await (const ev of client.generate(params({ inputIds: Uint32Array.from([1, 2, 3]), maxNewTokens: 10_000 }), ac.signal)) {
          if (ev.kind === 'chunk' && ++got === 5) {
            ac.abort();
          }
        }
      })(),
      (e: unknown) => e instanceof EngineError && e.code === 'aborted',
    );
    assert.ok(await waitFor(() => mock.stats.aborts === before + 1, HANG_GUARD_MS), 'mock counted the abort');
    assert.ok(await waitFor(() => mock.stats.active === 0, HANG_GUARD_MS), 'mock freed the request');
  });

  test('Abort rpc ends the stream with finish "abort"', async () => {
    const p = params({ inputIds: Uint32Array.from([1]), maxNewTokens: 10_000 });
    const before = mock.stats.aborts;
    const events: EngineEvent[] = [];
    for await (const ev of client.generate(p, new AbortController().signal)) {
      events.push(ev);
      if (events.length === 3) await client.abort(p.requestId);
    }
    const last = events.at(-1)!;
    assert.equal(last.kind, 'done');
    assert.equal(last.kind === 'done' && last.done.finishReason, 'abort');
    assert.equal(mock.stats.aborts, before + 1);
  });

  test('breaking out of the iterator frees the worker slot', async () => {
    for await (const ev of client.generate(params({ inputIds: Uint32Array.from([1]), maxNewTokens: 10_000 }), new AbortController().signal)) {
      if (ev.kind === 'chunk') break;
    }
    assert.ok(await waitFor(() => mock.stats.active === 0, HANG_GUARD_MS));
  });

  test('GetLoads sees running and waiting requests', async () => {
    // maxRunningRequests = 1: the second request waits.
    const a = new AbortController();
    const b = new AbortController();
    const drain = (it: AsyncIterable<EngineEvent>) => collect(it).catch(() => undefined);
    const pa = drain(client.generate(params({ inputIds: Uint32Array.from([1]), maxNewTokens: 10_000 }), a.signal));
    const pb = drain(client.generate(params({ inputIds: Uint32Array.from([1]), maxNewTokens: 10_000 }), b.signal));
    assert.ok(await waitFor(() => mock.stats.active === 2, HANG_GUARD_MS));
    const l = await client.loads();
    assert.equal(l.runningRequests, 1);
    assert.equal(l.waitingRequests, 1);
    a.abort();
    b.abort();
    await Promise.all([pa, pb]);
    assert.ok(await waitFor(() => mock.stats.active === 0, HANG_GUARD_MS));
  });

  test('prefix cache: repeated prompt reports cached tokens', async () => {
    const prompt = Uint32Array.from({ length: 40 }, (_, i) => i + 1);
    await collect(client.generate(params({ inputIds: prompt, maxNewTokens: 1 }), new AbortController().signal));
    const r = await collect(client.generate(params({ inputIds: prompt, maxNewTokens: 1 }), new AbortController().signal));
    assert.equal(r.done[0]!.cachedTokens, 32);
  });
});

describe('failures', () => {
  test('unreachable worker → EngineError unavailable, quickly', async () => {
    // A port nobody listens on: bind, read the port, close.
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as net.AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const client = new SglangEngineClient(`grpc://127.0.0.1:${port}`, { connectTimeoutMs: 500 });
    const t0 = Date.now();
    await assert.rejects(
      collect(client.generate(params({ inputIds: Uint32Array.from([1]) }), new AbortController().signal)),
      (e: unknown) => e instanceof EngineError && e.code === 'unavailable' && /unreachable/.test(e.message),
    );
    // a hang guard, not a timing: refused at once, or at the 500 ms connect timeout at worst
    assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
    assert.equal(await client.health(), false);
    await assert.rejects(client.modelInfo(), (e: unknown) => e instanceof EngineError && e.code === 'unavailable');
    client.close();
  });

  test('hung worker (TCP up, no HTTP/2) → unavailable once PINGs go unanswered', async () => {
    // A listener that accepts TCP but never speaks HTTP/2. (A blackholed
    // host is covered by connectTimeoutMs instead; not reproducible here.)
    const sockets: net.Socket[] = [];
    const srv = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as net.AddressInfo).port;
    const client = new SglangEngineClient(`grpc://127.0.0.1:${port}`, { connectTimeoutMs: 300, pingIntervalMs: 200, pingTimeoutMs: 200 });
    const t0 = Date.now();
    await assert.rejects(
      collect(client.generate(params({ inputIds: Uint32Array.from([1]) }), new AbortController().signal)),
      (e: unknown) => e instanceof EngineError && (e.code === 'unavailable' || e.code === 'timeout'),
    );
    assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`); // a hang guard: without the PINGs it would wait forever
    client.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => srv.close(() => r()));
  });

  test('worker dies mid-stream → EngineError unavailable', async () => {
    const mock = await startMockEngine({ port: 0, mode: 'sim', eosTokenIds: [EOS], vocabSize: VOCAB, stepMs: 2, eosProbability: 0 });
    const client = new SglangEngineClient(mock.url);
    await assert.rejects(
      (async () => {
        let n = 0;
        for await (const ev of client.generate(params({ inputIds: Uint32Array.from([1]), maxNewTokens: 10_000 }), new AbortController().signal)) {
          if (ev.kind === 'chunk' && ++n === 3) void mock.close();
        }
      })(),
      (e: unknown) => e instanceof EngineError && (e.code === 'unavailable' || e.code === 'internal'),
    );
    client.close();
  });

  test('already-aborted signal → aborted without touching the network', async () => {
    const client = new SglangEngineClient('grpc://127.0.0.1:1');
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(collect(client.generate(params({ inputIds: Uint32Array.from([1]) }), ac.signal)),
      (e: unknown) => e instanceof EngineError && e.code === 'aborted');
    client.close();
  });

  test('bad URLs are rejected', () => {
    assert.equal(toBaseUrl('grpc://10.0.0.5:30000'), 'http://10.0.0.5:30000');
    assert.throws(() => toBaseUrl('10.0.0.5:30000'), EngineError);
    assert.throws(() => toBaseUrl('grpc://host'), EngineError);
  });
});

describe('request mapping', () => {
  test('engine defaults are filled (proto3 zeros are not defaults)', () => {
    const r = buildGenerateRequest({ requestId: 'x', inputIds: Uint32Array.from([1, 2]), stream: true });
    const s = r.samplingParams!;
    assert.equal(s.temperature, 1);
    assert.equal(s.topP, 1);
    assert.equal(s.topK, -1);
    assert.equal(s.repetitionPenalty, 1);
    assert.equal(s.n, 1);
    assert.equal(s.maxNewTokens, undefined);
    assert.deepEqual(r.tokenized!.inputIds, [1, 2]);
    assert.equal(r.stream, true);
  });

  test('every sampling field is carried', () => {
    const r = buildGenerateRequest({
      requestId: 'x', inputIds: Uint32Array.from([1]), stream: false, maxNewTokens: 7, minNewTokens: 2,
      temperature: 0.5, topP: 0.9, topK: 40, minP: 0.05, frequencyPenalty: 0.1, presencePenalty: 0.2,
      repetitionPenalty: 1.1, stopTokenIds: [3, 4], ignoreEos: true, n: 3, loraId: 'ad1', dataParallelRank: 0,
    });
    const s = r.samplingParams!;
    assert.equal(s.maxNewTokens, 7);
    assert.equal(s.minNewTokens, 2);
    assert.equal(s.temperature, 0.5);
    assert.ok(Math.abs(s.topP - 0.9) < 1e-6);
    assert.equal(s.topK, 40);
    assert.ok(Math.abs(s.minP - 0.05) < 1e-6);
    assert.deepEqual(s.stopTokenIds, [3, 4]);
    assert.equal(s.ignoreEos, true);
    assert.equal(s.n, 3);
    assert.equal(r.loraId, 'ad1');
    assert.equal(r.dataParallelRank, 0);
    assert.equal(r.stream, false);
  });
});
