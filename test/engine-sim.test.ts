// The simulator's parts without the network: KV pool, scheduler, core.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { KvPool, type PoolEvent } from '../src/mock/kv-pool.js';
import { Scheduler, type Seq } from '../src/mock/scheduler.js';
import { TimingModel } from '../src/mock/timing.js';
import { createSimCore } from '../src/mock/engine-server.js';
import type { CoreOutput } from '../src/mock/sim-core.js';
import { eventually } from './helpers/eventually.js';

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

function seq(key: string, prompt: number[], maxOut = 1000): Seq {
  let out = 0;
  const s: Seq = {
    key,
    tokens: prompt.slice(),
    promptLen: prompt.length,
    computed: 0,
    cachedTokens: -1,
    kv: KvPool.newSeq(),
    state: 'waiting',
    preemptions: 0,
    sample: () => {
      out++;
      return { token: 7, finished: out >= maxOut };
    },
  };
  return s;
}

function runAll(sched: Scheduler, maxSteps = 1000): number {
  let steps = 0;
  while (sched.hasWork() && steps < maxSteps) {
    sched.complete(sched.schedule());
    steps++;
  }
  return steps;
}

describe('KV pool', () => {
  test('a repeated prefix is a hit at block granularity, never the whole prompt', () => {
    const pool = new KvPool({ numBlocks: 16, blockSize: 4 });
    const a = KvPool.newSeq();
    const toksA = range(1, 10);
    pool.hashBlocks(toksA, a.hashes);
    assert.equal(pool.acquirePrefix(a, toksA.length), 0);
    assert.ok(pool.allocate(a, 10));
    pool.commit(a, toksA, 10);
    pool.release(a);

    const b = KvPool.newSeq();
    const toksB = [...range(1, 8), 99, 98];
    pool.hashBlocks(toksB, b.hashes);
    assert.equal(pool.acquirePrefix(b, toksB.length), 8);
    pool.release(b);

    // Exactly two blocks long: the last block is recomputed (one token must be).
    const c = KvPool.newSeq();
    const toksC = range(1, 8);
    pool.hashBlocks(toksC, c.hashes);
    assert.equal(pool.acquirePrefix(c, toksC.length), 4);
  });

  test('equal blocks after different prefixes hash differently', () => {
    const pool = new KvPool({ numBlocks: 4, blockSize: 2 });
    const h1 = pool.hashBlocks([1, 2, 3, 4]);
    const h2 = pool.hashBlocks([9, 9, 3, 4]);
    assert.notEqual(h1[1], h2[1]);
    assert.ok(h1.every(Number.isSafeInteger));
  });

  test('LRU: the least recently freed cached blocks are evicted first, with removed events', () => {
    const events: PoolEvent[] = [];
    const pool = new KvPool({ numBlocks: 4, blockSize: 2, onEvent: (e) => events.push(e) });
    const fill = (toks: number[]) => {
      const s = KvPool.newSeq();
      pool.hashBlocks(toks, s.hashes);
      pool.acquirePrefix(s, toks.length);
      assert.ok(pool.allocate(s, toks.length));
      pool.commit(s, toks, toks.length);
      return s;
    };
    const a = fill([1, 2, 3, 4]);
    const hashesA = a.hashes.slice();
    pool.release(a);
    const b = fill([5, 6, 7, 8]);
    const hashesB = b.hashes.slice();
    pool.release(b);
    assert.equal(pool.freeBlocks(), 4);
    assert.deepEqual(pool.cachedHashes(), new Set([...hashesA, ...hashesB]));
    events.length = 0;
    fill([10, 11, 12, 13]);
    const removed = events.filter((e) => e.kind === 'removed').flatMap((e) => (e.kind === 'removed' ? e.hashes : []));
    assert.deepEqual(new Set(removed), new Set(hashesA), 'A was freed first, so A goes first');
    assert.ok(hashesB.every((h) => pool.cachedHashes().has(h)));
  });

  test('stored events carry token ids and the parent hash', () => {
    const events: PoolEvent[] = [];
    const pool = new KvPool({ numBlocks: 8, blockSize: 2, onEvent: (e) => events.push(e) });
    const s = KvPool.newSeq();
    const toks = [1, 2, 3, 4, 5, 6, 7];
    assert.ok(pool.allocate(s, toks.length));
    pool.commit(s, toks, 4);
    pool.commit(s, toks, 7);
    const stored = events.filter((e) => e.kind === 'stored');
    assert.equal(stored.length, 2);
    const [first, second] = stored as Array<Extract<PoolEvent, { kind: 'stored' }>>;
    assert.equal(first!.parentHash, undefined);
    assert.deepEqual(first!.blocks.map((b) => b.tokenIds), [[1, 2], [3, 4]]);
    assert.equal(second!.parentHash, first!.blocks[1]!.hash);
    assert.deepEqual(second!.blocks.map((b) => b.tokenIds), [[5, 6]]);
  });

  test('reset clears the cache only when no block is held', () => {
    const events: PoolEvent[] = [];
    const pool = new KvPool({ numBlocks: 4, blockSize: 2, onEvent: (e) => events.push(e) });
    const s = KvPool.newSeq();
    pool.allocate(s, 4);
    pool.commit(s, [1, 2, 3, 4], 4);
    assert.equal(pool.reset(), false);
    pool.release(s);
    assert.equal(pool.reset(), true);
    assert.equal(pool.cachedHashes().size, 0);
    assert.equal(events.at(-1)!.kind, 'cleared');
  });
});

describe('scheduler', () => {
  test('chunked prefill: a long prompt takes several steps under the token budget', () => {
    const pool = new KvPool({ numBlocks: 64, blockSize: 4 });
    const sched = new Scheduler(pool, { maxNumSeqs: 4, maxNumBatchedTokens: 8 });
    const s = seq('a', range(1, 20), 1);
    sched.add(s);
    const chunks: number[] = [];
    for (let i = 0; i < 3; i++) {
      const step = sched.schedule();
      chunks.push(step.entries[0]!.newTokens);
      const out = sched.complete(step);
      assert.equal(out.length, i < 2 ? 0 : 1, 'a token only once the whole prompt is in');
    }
    assert.deepEqual(chunks, [8, 8, 4]);
    assert.equal(s.state, 'finished');
    assert.equal(pool.usedBlocks(), 0);
  });

  test('without chunked prefill a prompt goes in whole', () => {
    const pool = new KvPool({ numBlocks: 64, blockSize: 4 });
    const sched = new Scheduler(pool, { maxNumSeqs: 4, maxNumBatchedTokens: 8, chunkedPrefill: false });
    sched.add(seq('a', range(1, 20), 1));
    assert.equal(sched.schedule().entries[0]!.newTokens, 20);
  });

  test('max_num_seqs bounds the running queue; the rest wait', () => {
    const pool = new KvPool({ numBlocks: 64, blockSize: 4 });
    const sched = new Scheduler(pool, { maxNumSeqs: 2, maxNumBatchedTokens: 100 });
    for (let i = 0; i < 5; i++) sched.add(seq(`s${i}`, [i + 1, 2, 3], 3));
    sched.complete(sched.schedule());
    assert.equal(sched.running.length, 2);
    assert.equal(sched.waiting.length, 3);
    runAll(sched);
    assert.equal(pool.usedBlocks(), 0);
  });

  test('preemption: when blocks run out the newest running sequence is sent back, then finishes', () => {
    const pool = new KvPool({ numBlocks: 4, blockSize: 4 });
    const sched = new Scheduler(pool, { maxNumSeqs: 4, maxNumBatchedTokens: 100 });
    const a = seq('a', range(1, 7), 6);
    const b = seq('b', range(100, 7), 6);
    sched.add(a);
    sched.add(b);
    sched.complete(sched.schedule()); // both prefilled: 2 blocks each, pool full
    assert.equal(pool.freeBlocks(), 0);
    sched.complete(sched.schedule()); // decode: 8 tokens still fit in 2 blocks
    const step = sched.schedule(); // a's 9th token needs a third block
    assert.deepEqual(step.preempted.map((s) => s.key), ['b']);
    assert.equal(b.state, 'waiting');
    assert.equal(b.computed, 0);
    assert.equal(sched.preemptions, 1);
    sched.complete(step);
    runAll(sched);
    assert.equal(a.state, 'finished');
    assert.equal(b.state, 'finished');
    assert.equal(b.tokens.length, 7 + 6, 'the preempted sequence was recomputed and completed');
    assert.equal(pool.usedBlocks(), 0);
  });

  test('the step shape separates prefill from decode for the timing model', () => {
    const pool = new KvPool({ numBlocks: 64, blockSize: 4 });
    const sched = new Scheduler(pool, { maxNumSeqs: 4, maxNumBatchedTokens: 100 });
    sched.add(seq('a', range(1, 10), 5));
    const p = sched.schedule();
    assert.deepEqual(p.shape.prefill, [{ newTokens: 10, context: 10 }]);
    assert.equal(p.shape.decodeSeqs, 0);
    sched.complete(p);
    const d = sched.schedule();
    assert.equal(d.shape.decodeSeqs, 1);
    assert.equal(d.shape.decodeKvTokens, 11);
    const t = new TimingModel({ stepMs: 10, prefillMsPerToken: 1, prefillAttnMsPerTokenCtx: 0, decodeMsPerSeq: 0, decodeMsPerKvToken: 0, speedupRatio: 10 });
    assert.equal(t.simulatedMs(p.shape), 10);
    assert.equal(t.wallMs(d.shape), 1);
  });
});

describe('simulator core', () => {
  const opts = (over: Record<string, unknown> = {}) => ({
    port: 0, mode: 'sim' as const, eosTokenIds: [99], vocabSize: 100, eosProbability: 0, speedupRatio: 1000, ...over,
  });
  const run = (core: ReturnType<typeof createSimCore>, id: string, prompt: number[], maxNewTokens: number) =>
    new Promise<CoreOutput[]>((resolve) => {
      const outs: CoreOutput[] = [];
      core.submit({ id, prompt, n: 1, maxNewTokens, minNewTokens: 0, stopTokenIds: [], ignoreEos: false }, (o) => {
        outs.push(o);
        if (o.kind === 'finish') resolve(outs);
      });
    });

  test('aborting frees the request blocks at once', async () => {
    const core = createSimCore(opts({ blockSize: 4, numBlocks: 64 }));
    const outs: CoreOutput[] = [];
    core.submit({ id: 'x', prompt: range(1, 30), n: 1, maxNewTokens: 10_000, minNewTokens: 0, stopTokenIds: [], ignoreEos: true }, (o) => outs.push(o));
    await eventually(() => core.ranks[0]!.pool.usedBlocks() > 0, 'the request holds blocks');
    assert.ok(core.ranks[0]!.pool.usedBlocks() > 0);
    assert.equal(core.abort('x'), true);
    assert.equal(core.ranks[0]!.pool.usedBlocks(), 0);
    assert.equal(outs.at(-1)!.kind === 'finish' && outs.at(-1)!.kind, 'finish');
    assert.equal(core.active, 0);
    core.close();
  });

  test('cached tokens reported per request; deterministic with a seed', async () => {
    const core = createSimCore(opts({ blockSize: 16 }));
    const prompt = range(1, 50);
    const a = await run(core, 'a', prompt, 5);
    const b = await run(core, 'b', prompt, 5);
    const fin = (o: CoreOutput[]) => o.at(-1) as Extract<CoreOutput, { kind: 'finish' }>;
    assert.equal(fin(a).cachedTokens, 0);
    assert.equal(fin(b).cachedTokens, 48);
    const c = await run(core, 'a2', prompt, 5);
    const core2 = createSimCore(opts({ blockSize: 16 }));
    const d = await run(core2, 'a2', prompt, 5);
    assert.deepEqual(fin(c).outputIds, fin(d).outputIds, 'same id + seed → same tokens');
    const core3 = createSimCore(opts({ blockSize: 16, seed: 7 }));
    const e = await run(core3, 'a2', prompt, 5);
    assert.notDeepEqual(fin(e).outputIds, fin(d).outputIds, 'another engine seed → other tokens');
    for (const x of [core, core2, core3]) x.close();
  });

  test('reasoning output: think start, think tokens, think end, then the answer', async () => {
    const core = createSimCore(opts({ reasoning: { startId: 90, endId: 91, thinkTokens: 4 } }));
    const outs = await run(core, 'r', [1, 2, 3], 10);
    const ids = (outs.at(-1) as Extract<CoreOutput, { kind: 'finish' }>).outputIds;
    assert.equal(ids[0], 90);
    assert.equal(ids[5], 91);
    assert.equal(ids.length, 10);
    core.close();
  });

  test('data parallel: requests spread over ranks, or pin to one', async () => {
    const core = createSimCore(opts({ dataParallelSize: 2 }));
    const outs: CoreOutput[] = [];
    for (let i = 0; i < 4; i++) {
      core.submit({ id: `d${i}`, prompt: [1, 2, 3], n: 1, maxNewTokens: 10_000, minNewTokens: 0, stopTokenIds: [], ignoreEos: true }, (o) => outs.push(o));
    }
    const per = core.ranks.map((r) => r.sched.running.length + r.sched.waiting.length);
    assert.deepEqual(per, [2, 2]);
    core.submit({ id: 'pin', prompt: [1], n: 1, maxNewTokens: 10_000, minNewTokens: 0, stopTokenIds: [], ignoreEos: true, dpRank: 1 }, () => {});
    assert.equal(core.ranks[1]!.sched.waiting.length + core.ranks[1]!.sched.running.length, 3);
    assert.throws(() => core.submit({ id: 'bad', prompt: [1], n: 1, minNewTokens: 0, stopTokenIds: [], ignoreEos: true, dpRank: 5 }, () => {}));
    core.close();
  });

  test('a prompt larger than the KV cache is refused', () => {
    const core = createSimCore(opts({ blockSize: 4, numBlocks: 2 }));
    assert.throws(() => core.submit({ id: 'big', prompt: range(1, 20), n: 1, minNewTokens: 0, stopTokenIds: [], ignoreEos: true }, () => {}), /does not fit/);
    core.close();
  });
});

describe('zero-cost steps (echo timing)', () => {
  const echoCore = () => createSimCore({ port: 0, mode: 'echo', eosTokenIds: [99], vocabSize: 100 });
  const submit = (core: ReturnType<typeof createSimCore>, id: string, prompt: number[], outs: CoreOutput[]) =>
    core.submit({ id, prompt, n: 1, minNewTokens: 0, stopTokenIds: [], ignoreEos: false }, (o) => outs.push(o));

  test('requests submitted in one turn share the first step, and all their steps run in the next turn', async () => {
    const core = echoCore();
    const a: CoreOutput[] = [];
    const b: CoreOutput[] = [];
    submit(core, 'a', range(1, 8), a);
    submit(core, 'b', range(11, 8), b);
    assert.equal(a.length + b.length, 0, 'nothing runs inside submit');
    await new Promise((r) => setImmediate(r));
    // One output per token (no merging), then the finish, within one turn: no timers.
    assert.deepEqual(a.filter((o) => o.kind === 'tokens').map((o) => o.kind === 'tokens' && o.tokenIds), range(1, 8).map((t) => [t]));
    assert.equal(a.at(-1)!.kind, 'finish');
    assert.equal(b.at(-1)!.kind, 'finish');
    assert.equal(core.ranks[0]!.steps, 8, 'a and b ran in the same 8 steps');
    core.close();
  });

  test('a long echo yields to I/O between slices instead of holding the loop', async () => {
    const core = echoCore();
    const outs: CoreOutput[] = [];
    submit(core, 'long', range(1, 20_000), outs);
    await new Promise((r) => setImmediate(r));
    assert.ok(outs.length > 0 && outs.at(-1)!.kind !== 'finish', `one slice must not finish 20k steps (got ${outs.length})`);
    while (outs.at(-1)?.kind !== 'finish') await new Promise((r) => setImmediate(r));
    assert.equal(outs.length, 20_001);
    core.close();
  });

  test('sim timing still paces steps by the model', async () => {
    const core = createSimCore({ port: 0, mode: 'sim', eosTokenIds: [99], vocabSize: 100, eosProbability: 0, stepMs: 5 });
    const outs: CoreOutput[] = [];
    const t0 = performance.now();
    await new Promise<void>((resolve) => core.submit({ id: 's', prompt: [1], n: 1, maxNewTokens: 6, minNewTokens: 0, stopTokenIds: [], ignoreEos: false }, (o) => {
      outs.push(o);
      if (o.kind === 'finish') resolve();
    }));
    // 6 decode-ish steps of >= 5 ms each (the first is a prefill with no step cost).
    assert.ok(performance.now() - t0 >= 24, `took ${performance.now() - t0} ms`);
    core.close();
  });
});
