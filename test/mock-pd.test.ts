// The mock engine's disaggregated roles over real gRPC, driven as each protocol's router
// drives a prefill/decode pair: SGLang's both legs at once with one bootstrap room, vLLM's
// prefill leg first (max_tokens 1, stream false, do_remote_decode) and then the decode leg
// with the params the prefill leg returned. Roles in GetServerInfo, the KV hand-over on the
// decode side (cached tokens, stored blocks), faults on either side, cancellation while a
// leg waits, and requests a role refuses.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';

import { EngineError } from '../src/engine/errors.js';
import { createEngineClient } from '../src/engine/factory.js';
import type { EngineClient, EngineEvent, GenerateDone, GenerateParams, TokenChunk } from '../src/engine/types.js';
import { startMockEngine, type MockEngine, type MockEngineOptions } from '../src/mock/engine-server.js';
import { faultIn } from '../src/mock/faults.js';
import type { PoolEvent } from '../src/mock/kv-pool.js';
import type { KvRendezvousStore } from '../src/mock/kv-rendezvous.js';
import { eventually, HANG_GUARD_MS } from './helpers/eventually.js';
import { collect } from './helpers/engine-events.js';

const EOS = 999;
const T = { timeout: HANG_GUARD_MS };
/** Prompts are their characters' codes, so the fault triggers read straight off the ids. */
const ids = (text: string) => Uint32Array.from(Array.from(text, (c) => c.charCodeAt(0)));
const PROMPT = 'Tell me about disaggregated serving, in detail, with numbers. '.repeat(2);
const never = () => new AbortController().signal;
let seq = 0;
const rid = () => `pd-${process.pid}-${++seq}`;
let roomSeq = 1000;

function engineOptions(over: Partial<MockEngineOptions>): MockEngineOptions {
  return {
    port: 0, mode: 'sim', eosTokenIds: [EOS], vocabSize: 1000, eosProbability: 0, speedupRatio: 50, blockSize: 16,
    faults: { decode: (x) => String.fromCharCode(...Array.from(x)) },
    ...over,
  };
}


/** The rejection of `p` (an EngineError), failing when it resolves. */
async function failure(p: Promise<unknown>): Promise<EngineError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof EngineError, `an EngineError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the generation to fail');
}

/** Hashes of the blocks a decode engine reports stored. */
function storedHashes(e: MockEngine): { hashes: Set<number>; stop: () => void } {
  const hashes = new Set<number>();
  const stop = e.core.hub.subscribe((b) => {
    for (const ev of b.events as PoolEvent[]) if (ev.kind === 'stored') for (const blk of ev.blocks) hashes.add(blk.hash);
  });
  return { hashes, stop };
}

/**
 * Start `p` on a decode engine whose KV never comes, cancel it once it polls the prefill
 * worker's side channel: it must end "aborted" at once, the side channel stop waiting for
 * it because it hung up, and the decode engine hold nothing for it.
 */
async function cancelWhileWaiting(store: KvRendezvousStore, decode: MockEngine, client: EngineClient, p: GenerateParams): Promise<void> {
  const ac = new AbortController();
  const waiting = once(store, 'waiting');
  const dec = failure(collect(client.generate(p, ac.signal)));
  await waiting;
  assert.equal(store.waiting(), 1);
  const released = once(store, 'released');
  ac.abort();
  assert.equal((await dec).code, 'aborted');
  assert.equal((await released)[1], 'left', 'the side channel stopped waiting because the decode worker hung up');
  assert.equal(store.waiting(), 0);
  await decode.context.pending.whenIdle();
  assert.equal(decode.stats.active, 0);
}

describe('fault triggers scoped to a role', () => {
  test('an unscoped trigger fires on every role; a scoped one only on its own', () => {
    for (const role of ['aggregated', 'prefill', 'decode'] as const) assert.deepEqual(faultIn('x [[fault:internal@2]]', role), { kind: 'internal', after: 2 });
    assert.deepEqual(faultIn('[[fault:reset:decode@5]]', 'decode'), { kind: 'reset', after: 5, role: 'decode' });
    assert.equal(faultIn('[[fault:reset:decode@5]]', 'prefill'), null);
    assert.equal(faultIn('[[fault:reset:decode]]', 'aggregated'), null);
    assert.equal(faultIn('[[fault:reset:nobody]]', 'decode'), null);
  });

  test('the first trigger that applies wins, so one prompt can fail each side its own way', () => {
    const text = '[[fault:internal:prefill]] [[fault:unavailable:decode@3]]';
    assert.deepEqual(faultIn(text, 'prefill'), { kind: 'internal', after: 0, role: 'prefill' });
    assert.deepEqual(faultIn(text, 'decode'), { kind: 'unavailable', after: 3, role: 'decode' });
    assert.equal(faultIn(text, 'aggregated'), null);
  });

  test('no_rendezvous applies to a prefill worker only', () => {
    assert.deepEqual(faultIn('[[fault:no_rendezvous]]', 'prefill'), { kind: 'no_rendezvous', after: 0 });
    assert.equal(faultIn('[[fault:no_rendezvous]]', 'decode'), null);
    assert.equal(faultIn('[[fault:no_rendezvous]]', 'aggregated'), null);
  });
});

describe('SGLang protocol: a prefill/decode pair of mock engines', () => {
  let prefill: MockEngine;
  let decode: MockEngine;
  let aggregated: MockEngine;
  let shortDecode: MockEngine;
  let pc: EngineClient;
  let dc: EngineClient;
  let ac: EngineClient;
  let sdc: EngineClient;

  before(async () => {
    prefill = await startMockEngine(engineOptions({ role: 'prefill' }));
    decode = await startMockEngine(engineOptions({ role: 'decode' }));
    aggregated = await startMockEngine(engineOptions({}));
    shortDecode = await startMockEngine(engineOptions({ role: 'decode', rendezvousTimeoutMs: 200 }));
    [pc, dc, ac, sdc] = [prefill, decode, aggregated, shortDecode].map((e) => createEngineClient(e.url));
  });
  after(async () => {
    for (const c of [pc, dc, ac, sdc]) c.close();
    await Promise.all([prefill, decode, aggregated, shortDecode].map((e) => e.close()));
  });

  const leg = (text: string, over: Partial<GenerateParams> = {}): GenerateParams => ({
    requestId: rid(), inputIds: ids(text), maxNewTokens: 12, ignoreEos: true, stream: true,
    bootstrap: { host: '127.0.0.1', port: prefill.rendezvous!.port, room: ++roomSeq },
    ...over,
  });

  test('serverInfo names each role; the prefill worker its bootstrap port', async () => {
    assert.deepEqual((await pc.serverInfo()).disaggregation, { role: 'prefill', bootstrapPort: prefill.rendezvous!.port });
    assert.deepEqual((await dc.serverInfo()).disaggregation, { role: 'decode' });
    assert.deepEqual((await ac.serverInfo()).disaggregation, { role: null });
    assert.equal((await ac.serverInfo()).serverArgs['disaggregation_mode'], 'null');
    assert.equal(decode.rendezvous, undefined, 'only a prefill worker runs a bootstrap server');
  });

  test('both legs at once: prefill answers one token, decode streams the answer over the transferred KV', T, async () => {
    const p = leg(PROMPT);
    const stored = storedHashes(decode);
    const [pre, dec] = await Promise.all([collect(pc.generate({ ...p }, never())), collect(dc.generate({ ...p }, never()))]);
    stored.stop();
    assert.equal(pre.tokens.length, 1, 'the prefill leg samples one token');
    assert.equal(pre.done.length, 1);
    assert.equal(pre.done[0]!.finishReason, 'length');
    assert.equal(dec.tokens.length, 12);
    assert.equal(dec.done[0]!.finishReason, 'length');
    assert.equal(dec.done[0]!.promptTokens, PROMPT.length);
    assert.equal(dec.done[0]!.cachedTokens, PROMPT.length - 1, 'all but the last prompt token came from the prefill worker');
    assert.equal(dec.chunks[0]!.cachedTokens, PROMPT.length - 1);
    const full = decode.core.blockHashes(Array.from(p.inputIds)).slice(0, Math.floor((PROMPT.length - 1) / 16));
    for (const h of full) assert.ok(stored.hashes.has(h), 'the transferred blocks are published as stored on decode');
    assert.equal(prefill.rendezvous!.store.held(), 0, 'taken KV is no longer held');
  });

  test('the same prompt on an aggregated worker is computed there (no cached tokens), PD params ignored', T, async () => {
    const r = await collect(ac.generate(leg(`fresh ${rid()} ${PROMPT}`), never()));
    assert.equal(r.tokens.length, 12);
    assert.equal(r.done[0]!.cachedTokens, 0);
  });

  test('without disaggregated_params both roles refuse: INVALID_ARGUMENT naming the reason', async () => {
    for (const c of [pc, dc]) {
      const e = await failure(collect(c.generate(leg(PROMPT, { bootstrap: undefined }), never())));
      assert.equal(e.code, 'invalid_argument');
      assert.match(e.engineMessage ?? e.message, /needs disaggregated_params/);
    }
  });

  test('prefill dies (fault scoped to prefill): it fails INTERNAL, and the waiting decode hears of it at once', T, async () => {
    const p = leg(`${PROMPT} [[fault:internal:prefill]]`);
    // The decode leg is waiting on its room before the prefill leg fails.
    const waiting = once(prefill.rendezvous!.store, 'waiting');
    const dec = failure(collect(dc.generate({ ...p }, never())));
    await waiting;
    const pre = await failure(collect(pc.generate({ ...p }, never())));
    assert.equal(pre.code, 'internal');
    const d = await dec;
    assert.equal(d.code, 'internal');
    assert.match(d.engineMessage ?? '', new RegExp(`^Decode transfer failed for request rank=0 decode_req\\.req\\.rid='${p.requestId}' decode_req\\.req\\.bootstrap_room=${p.bootstrap!.room} with exception KVTransferError\\(bootstrap_room=${p.bootstrap!.room}\\): Aborted by AbortReq\\.$`));
  });

  test('no_rendezvous: prefill answers, decode fails INTERNAL at its bound (KVPoll.WaitingForInput)', T, async () => {
    const p = leg(`${PROMPT} [[fault:no_rendezvous]]`);
    const [pre, dec] = await Promise.all([collect(pc.generate({ ...p }, never())), failure(collect(sdc.generate({ ...p }, never())))]);
    assert.equal(pre.done[0]!.finishReason, 'length');
    assert.equal(dec.code, 'internal');
    assert.match(dec.engineMessage ?? '', new RegExp(`KVTransferError\\(bootstrap_room=${p.bootstrap!.room}\\): Request ${p.bootstrap!.room} timed out after 0\\.2s in KVPoll\\.WaitingForInput$`));
    assert.equal(prefill.rendezvous!.store.held(), 0);
    assert.equal(shortDecode.stats.active, 0);
  });

  test('decode dies mid-stream (fault scoped to decode, @3): three tokens, then UNAVAILABLE; prefill unharmed', T, async () => {
    const p = leg(`${PROMPT} [[fault:unavailable:decode@3]]`);
    const tokens: number[] = [];
    const pre = collect(pc.generate({ ...p }, never()));
    const dec = failure((async () => {
      for await (const ev of dc.generate({ ...p }, never())) if (ev.kind === 'chunk') tokens.push(...ev.chunk.tokenIds);
    })());
    assert.equal((await dec).code, 'unavailable');
    assert.equal(tokens.length, 3);
    assert.equal((await pre).done[0]!.finishReason, 'length');
  });

  test('an IPv6 prefill worker: the bootstrap host as a URL writes it ([::1]) reaches it', T, async () => {
    const v6 = await startMockEngine(engineOptions({ role: 'prefill', host: '::1' }));
    const c = createEngineClient(v6.url);
    try {
      assert.match(v6.url, /^grpc:\/\/\[::1\]:\d+$/);
      const p = leg(`v6 ${PROMPT}`, { bootstrap: { host: '[::1]', port: v6.rendezvous!.port, room: ++roomSeq } });
      const [pre, dec] = await Promise.all([collect(c.generate({ ...p }, never())), collect(dc.generate({ ...p }, never()))]);
      assert.equal(pre.done[0]!.finishReason, 'length');
      assert.equal(dec.done[0]!.cachedTokens, p.inputIds.length - 1);
    } finally {
      c.close();
      await v6.close();
    }
  });

  test('a decode leg whose prefill worker is down fails INTERNAL at once ("it might be dead")', T, async () => {
    const gone = await startMockEngine(engineOptions({ role: 'prefill' }));
    const port = gone.rendezvous!.port;
    await gone.close();
    const e = await failure(collect(dc.generate(leg(PROMPT, { bootstrap: { host: '127.0.0.1', port, room: ++roomSeq } }), never())));
    assert.equal(e.code, 'internal');
    assert.match(e.engineMessage ?? '', /Failed to get kvcache from prefill instance, it might be dead$/);
  });

  test('cancelling the decode stream while it waits for its room ends it at once and stops the wait', T, async () => {
    await cancelWhileWaiting(prefill.rendezvous!.store, decode, dc, leg(PROMPT));
  });

  test('an Abort rpc reaches a decode leg waiting for its room: its choice ends "abort"', T, async () => {
    const store = prefill.rendezvous!.store;
    const p = leg(PROMPT);
    const waiting = once(store, 'waiting');
    const dec = collect(dc.generate(p, never()));
    await waiting;
    const released = once(store, 'released');
    await dc.abort(p.requestId);
    const r = await dec;
    assert.equal(r.done[0]!.finishReason, 'abort');
    assert.equal(r.tokens.length, 0);
    assert.equal((await released)[1], 'left');
  });

  test('an Abort rpc reaches a prefill leg waiting for its KV to be taken: "abort", KV freed', T, async () => {
    const store = prefill.rendezvous!.store;
    const p = leg(PROMPT);
    const held = once(store, 'held');
    const pre = collect(pc.generate(p, never()));
    await held;
    const freed = once(store, 'freed');
    await pc.abort(p.requestId);
    const r = await pre;
    assert.equal(r.done[0]!.finishReason, 'abort');
    await freed;
    assert.equal(store.held(), 0);
  });

  test('the transfer time is paid after the KV is taken: a decode cancelled then ends "aborted", not answered', T, async () => {
    const slow = await startMockEngine(engineOptions({ role: 'decode', kvTransferMsPerToken: 1e6 }));
    const c = createEngineClient(slow.url);
    try {
      const p = leg(PROMPT);
      const ac = new AbortController();
      const taken = once(prefill.rendezvous!.store, 'freed');
      const dec = failure(collect(c.generate({ ...p }, ac.signal)));
      const pre = collect(pc.generate({ ...p }, never()));
      await taken;
      assert.equal((await pre).done[0]!.finishReason, 'length', 'the prefill leg answers once its KV was taken');
      await eventually(() => slow.context.kvTransfersInFlight === 1, 'the decode leg pays its transfer time');
      ac.abort();
      assert.equal((await dec).code, 'aborted');
      await slow.context.pending.whenIdle();
      assert.equal(slow.context.kvTransfersInFlight, 0);
      assert.equal(slow.core.ranks[0]!.pool.cachedHashes().size, 0, 'nothing entered the decode KV pool');
      assert.equal(slow.stats.active, 0);
    } finally {
      c.close();
      await slow.close();
    }
  });

  test('cancelling the prefill stream while its KV waits for the decode leg frees the KV', T, async () => {
    const store = prefill.rendezvous!.store;
    const ac = new AbortController();
    const held = once(store, 'held');
    const pre = failure(collect(pc.generate(leg(PROMPT), ac.signal)));
    await held;
    assert.equal(store.held(), 1);
    assert.ok(prefill.context.rankLoad(0).usedTokens > 0, 'the held KV occupies blocks');
    const freed = once(store, 'freed');
    ac.abort();
    assert.equal((await pre).code, 'aborted');
    await freed;
    assert.equal(store.held(), 0);
    assert.equal(prefill.context.rankLoad(0).usedTokens, 0, "the prefill worker's held blocks are released");
  });
});

for (const transport of ['h2', 'connect'] as const) {
  describe(`vLLM protocol (${transport} transport): a prefill/decode pair of mock engines`, () => {
    let prefill: MockEngine;
    let decode: MockEngine;
    let shortDecode: MockEngine;
    let pc: EngineClient;
    let dc: EngineClient;
    let sdc: EngineClient;

    before(async () => {
      prefill = await startMockEngine(engineOptions({ protocol: 'vllm', role: 'prefill' }));
      decode = await startMockEngine(engineOptions({ protocol: 'vllm', role: 'decode', kvConnector: 'NixlConnector' }));
      shortDecode = await startMockEngine(engineOptions({ protocol: 'vllm', role: 'decode', rendezvousTimeoutMs: 200 }));
      [pc, dc, sdc] = [prefill, decode, shortDecode].map((e) => createEngineClient(e.url, { generateTransport: transport }));
    });
    after(async () => {
      for (const c of [pc, dc, sdc]) c.close();
      await Promise.all([prefill, decode, shortDecode].map((e) => e.close()));
    });

    const request = (text: string, over: Partial<GenerateParams> = {}): GenerateParams => ({
      requestId: rid(), inputIds: ids(text), maxNewTokens: 10, ignoreEos: true, stream: true, ...over,
    });
    /** The prefill leg as vLLM's router sends it. */
    const prefillLeg = (p: GenerateParams): GenerateParams => ({
      ...p, maxNewTokens: 1, n: 1, stream: false, kvTransferParams: '{"do_remote_decode":true,"do_remote_prefill":false}',
    });

    test('serverInfo: kv_role as the role, the connector and its engine id', async () => {
      const p = (await pc.serverInfo()).disaggregation;
      assert.equal(p.role, 'prefill');
      assert.equal(p.kvConnector, 'NixlConnector');
      assert.match(p.kvEngineId ?? '', /^[0-9a-f-]{36}$/);
      const d = (await dc.serverInfo()).disaggregation;
      assert.equal(d.role, 'decode');
      assert.notEqual(d.kvEngineId, p.kvEngineId);
    });

    test('prefill (max_tokens 1, do_remote_decode) returns NIXL params; decode with them streams over the transferred KV', T, async () => {
      const p = request(PROMPT);
      const stored = storedHashes(decode);
      const pre = await collect(pc.generate(prefillLeg(p), never()));
      assert.equal(pre.done.length, 1);
      assert.equal(pre.done[0]!.outputIds.length, 1);
      assert.equal(pre.done[0]!.finishReason, 'length');
      const returned = pre.done[0]!.kvTransferParams;
      assert.ok(returned, 'the prefill leg returns kv_transfer_params');
      const kv = JSON.parse(returned) as Record<string, unknown>;
      assert.deepEqual(Object.keys(kv), [
        'do_remote_prefill', 'do_remote_decode', 'remote_block_ids', 'remote_engine_id', 'remote_request_id', 'remote_host',
        'remote_port', 'tp_size', 'dcp_size', 'pp_size', 'remote_num_tokens', 'remote_blocks_expiry_time', 'transfer_mode',
      ]);
      assert.equal(kv['do_remote_prefill'], true);
      assert.equal(kv['do_remote_decode'], false);
      assert.equal(kv['remote_host'], '127.0.0.1');
      assert.equal(kv['remote_port'], prefill.rendezvous!.port);
      assert.equal(kv['remote_engine_id'], (await pc.serverInfo()).disaggregation.kvEngineId);
      assert.equal(kv['remote_num_tokens'], PROMPT.length);
      assert.equal((kv['remote_block_ids'] as number[][])[0]!.length, Math.ceil(PROMPT.length / 16));
      assert.match(String(kv['remote_request_id']), new RegExp(`^${p.requestId}-[0-9a-f]{8}$`));
      assert.equal(prefill.rendezvous!.store.held(), 1, 'the prefill worker holds the KV until it is taken');
      const fullBlocks = Math.floor(PROMPT.length / 16);
      assert.equal((await pc.loads()).perRank[0]!.usedTokens, fullBlocks * 16, "the held prompt's blocks stay in use on the prefill worker");

      // The decode leg: the original request (same id), with exactly the returned JSON.
      const dec = await collect(dc.generate({ ...p, kvTransferParams: returned }, never()));
      stored.stop();
      assert.equal(dec.tokens.length, 10);
      assert.equal(dec.done[0]!.finishReason, 'length');
      assert.equal(dec.done[0]!.cachedTokens, PROMPT.length - 1);
      assert.equal(dec.done[0]!.kvTransferParams, undefined, 'a decode leg returns no params');
      assert.equal(prefill.context.rankLoad(0).usedTokens, 0, 'taken KV is released on the prefill worker');
      const full = decode.core.blockHashes(Array.from(p.inputIds)).slice(0, Math.floor((PROMPT.length - 1) / 16));
      for (const h of full) assert.ok(stored.hashes.has(h), 'the transferred blocks are published as stored on decode');
      assert.equal(prefill.rendezvous!.store.held(), 0);
    });

    test('MooncakeConnector: the router mints the transfer id; prefill returns nothing, decode takes the KV at the bootstrap address', T, async () => {
      const mc = await startMockEngine(engineOptions({ protocol: 'vllm', role: 'prefill', kvConnector: 'MooncakeConnector' }));
      const c = createEngineClient(mc.url, { generateTransport: transport });
      try {
        const si = (await c.serverInfo()).disaggregation;
        assert.equal(si.kvConnector, 'MooncakeConnector');
        const p = request(`mooncake ${PROMPT}`);
        const transferId = `xfer-${rid()}`;
        const pre = await collect(c.generate({ ...prefillLeg(p), kvTransferParams: JSON.stringify({ do_remote_decode: true, do_remote_prefill: false, transfer_id: transferId }) }, never()));
        assert.equal(pre.done[0]!.finishReason, 'length');
        assert.equal(pre.done[0]!.kvTransferParams, undefined, 'a push-based connector returns nothing to relay');
        const decodeParams = JSON.stringify({ do_remote_decode: false, do_remote_prefill: true, transfer_id: transferId, remote_engine_id: si.kvEngineId, remote_bootstrap_addr: `http://127.0.0.1:${mc.rendezvous!.port}` });
        const dec = await collect(dc.generate({ ...p, kvTransferParams: decodeParams }, never()));
        assert.equal(dec.tokens.length, 10);
        assert.equal(dec.done[0]!.cachedTokens, p.inputIds.length - 1);
        assert.equal(mc.rendezvous!.store.held(), 0);
      } finally {
        c.close();
        await mc.close();
      }
    });

    test('a decode worker given no params computes the prompt itself, as vLLM does', T, async () => {
      const r = await collect(dc.generate(request(`local ${rid()} ${PROMPT}`), never()));
      assert.equal(r.tokens.length, 10);
      assert.equal(r.done[0]!.cachedTokens, 0);
    });

    test('a prefill worker given no params serves the request whole', T, async () => {
      const r = await collect(pc.generate(request(PROMPT), never()));
      assert.equal(r.tokens.length, 10);
      assert.equal(r.done[0]!.kvTransferParams, undefined);
    });

    test('wrong-role and malformed params are refused: INVALID_ARGUMENT', async () => {
      const cases: Array<[EngineClient, string, RegExp]> = [
        [dc, '{"do_remote_decode":true,"do_remote_prefill":false}', /kv_consumer/],
        [pc, '{"do_remote_prefill":true,"remote_host":"h","remote_port":1,"remote_request_id":"x"}', /kv_producer/],
        [dc, '{"do_remote_prefill":true,"remote_host":"h"}', /need remote_host, remote_port/],
        [dc, '{not json', /^Invalid kv_transfer_params_json/],
        [pc, '[1]', /must be a JSON object/],
      ];
      for (const [c, json, why] of cases) {
        const e = await failure(collect(c.generate(request(PROMPT, { kvTransferParams: json }), never())));
        assert.equal(e.code, 'invalid_argument', json);
        assert.match(e.engineMessage ?? '', why);
      }
    });

    test('prefill dies (fault scoped to prefill): INTERNAL, no params; the decode side never involved', T, async () => {
      const e = await failure(collect(pc.generate(prefillLeg(request(`${PROMPT} [[fault:internal:prefill]]`)), never())));
      assert.equal(e.code, 'internal');
      assert.equal(prefill.rendezvous!.store.held(), 0);
    });

    test('no_rendezvous: prefill returns params, decode finishes "error" with no tokens at its bound: the client reads an engine failure', T, async () => {
      const p = request(`${PROMPT} [[fault:no_rendezvous]]`);
      const pre = await collect(pc.generate(prefillLeg(p), never()));
      const returned = pre.done[0]!.kvTransferParams;
      assert.ok(returned);
      // vLLM's completion with finish_reason "error" is the worker's failure (its own server answers 500).
      const e = await failure(collect(sdc.generate({ ...p, kvTransferParams: returned }, never())));
      assert.equal(e.code, 'internal');
      assert.equal(e.health, 'strike');
      assert.match(e.message, /finish_reason "error"/);
      assert.equal(shortDecode.stats.active, 0);
    });

    test('decode dies mid-stream (fault scoped to decode, @4): four tokens, then INTERNAL', T, async () => {
      const p = request(`${PROMPT} [[fault:internal:decode@4]]`);
      const pre = await collect(pc.generate(prefillLeg(p), never()));
      const tokens: number[] = [];
      const e = await failure((async () => {
        for await (const ev of dc.generate({ ...p, kvTransferParams: pre.done[0]!.kvTransferParams }, never())) if (ev.kind === 'chunk') tokens.push(...ev.chunk.tokenIds);
      })());
      assert.equal(e.code, 'internal');
      assert.equal(tokens.length, 4);
    });

    test('cancelling a decode leg waiting for its KV ends it at once and stops the wait', T, async () => {
      const params = JSON.stringify({ do_remote_prefill: true, do_remote_decode: false, remote_host: '127.0.0.1', remote_port: prefill.rendezvous!.port, remote_request_id: `nobody-${rid()}` });
      await cancelWhileWaiting(prefill.rendezvous!.store, decode, dc, request(PROMPT, { kvTransferParams: params }));
    });

    test('KV nobody takes is freed when its hold (the rendezvous bound) ends', T, async () => {
      const short = await startMockEngine(engineOptions({ protocol: 'vllm', role: 'prefill', rendezvousTimeoutMs: 100 }));
      const c = createEngineClient(short.url, { generateTransport: transport });
      try {
        const freed = once(short.rendezvous!.store, 'freed');
        const pre = await collect(c.generate(prefillLeg(request(PROMPT)), never()));
        assert.ok(pre.done[0]!.kvTransferParams);
        await freed;
        assert.equal(short.rendezvous!.store.held(), 0);
        assert.equal(short.context.rankLoad(0).usedTokens, 0, 'expired KV is released');
      } finally {
        c.close();
        await short.close();
      }
    });
  });
}
