// The simulated engine: data-parallel ranks, each with its own KV pool,
// scheduler and step loop, behind a protocol-neutral request API. The gRPC
// services (SGLang, vLLM) translate their wire messages to and from this.

import { KvEventHub, type SnapshotBlock } from './kv-event-hub.js';
import { KvPool } from './kv-pool.js';
import { Scheduler, type PlannedStep, type Seq } from './scheduler.js';
import { TimingModel, type TimingOptions } from './timing.js';
import { ChoiceGenerator } from './token-policy.js';
import { hashString } from './seeded.js';
import { DeterministicTokens, type ScriptTokenizer } from './script.js';

export interface SimCoreOptions {
  mode: 'echo' | 'sim';
  eosTokenIds: number[];
  vocabSize: number;
  /** sim: tokens are drawn below this id. Default: lowest EOS id, else vocabSize. */
  regularVocabSize?: number;
  eosProbability: number;
  maxContextLength: number;
  dataParallelSize: number;
  blockSize: number;
  /** KV blocks per rank. */
  numBlocks: number;
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  chunkedPrefill: boolean;
  prefixCaching: boolean;
  timing: Partial<TimingOptions>;
  /** Mixed into every request's sampling seed. */
  seed: number;
  reasoning?: { startId: number; endId: number; thinkTokens: number };
  /**
   * sim: each token is a pure function of the ids before it (src/mock/script.ts); with a
   * tokenizer, a script that exercises reasoning and tool-call parsers.
   */
  deterministic?: { tokenizer?: ScriptTokenizer };
}

export interface CoreRequest {
  id: string;
  prompt: ArrayLike<number>;
  n: number;
  /** Unset: echo = prompt length, sim = rest of the context. */
  maxNewTokens?: number;
  minNewTokens: number;
  stopTokenIds: number[];
  ignoreEos: boolean;
  /** Request's own sampling seed, when its protocol carries one. */
  seed?: number;
  dpRank?: number;
  /**
   * Disaggregated decode: this many leading prompt tokens' KV arrived from a prefill worker.
   * They enter the KV pool as computed (stored blocks, reported as cached tokens) instead of
   * being prefilled; the rest of the prompt is computed here.
   */
  transferredTokens?: number;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export type CoreOutput =
  | ({ kind: 'tokens'; index: number; tokenIds: number[] } & Usage)
  | ({ kind: 'finish'; index: number; reason: string; matchedTokenId?: number; outputIds: number[] } & Usage);

export class SimRequestError extends Error {}

const CATCH_UP_MS = 200;
/** Zero-cost steps run back to back for at most this long before yielding to I/O. */
const FREE_SLICE_MS = 1;

type Choice = Seq & { index: number; gen: ChoiceGenerator; req: Live };

interface Live {
  req: CoreRequest;
  rank: Rank;
  choices: Choice[];
  open: number;
  emit: (o: CoreOutput) => void;
}

interface Rank {
  id: number;
  pool: KvPool;
  sched: Scheduler;
  stepping: boolean;
  /** Wall time (ms) at which the simulated clock says the last step ended. */
  due: number;
  steps: number;
  tokensOut: number;
}

export class SimCore {
  readonly o: SimCoreOptions;
  readonly timing: TimingModel;
  readonly hub: KvEventHub;
  readonly ranks: Rank[];
  private readonly live = new Map<string, Live>();
  private readonly drawBound: number;
  private readonly deterministic: DeterministicTokens | undefined;
  private closed = false;
  /** Generated tokens, for throughput figures. */
  tokensOut = 0;
  private tpsWindow: Array<[number, number]> = [];
  /** Every step costs 0 ms (echo's default timing). */
  private readonly free: boolean;
  /**
   * Opt-in (benches): per request id, for every token emitted, the CLOCK_MONOTONIC time in ms
   * (comparable across processes on this machine) and the token id, alternating.
   */
  emitTrace: Map<string, number[]> | null = null;

  constructor(o: SimCoreOptions) {
    this.o = o;
    this.timing = new TimingModel(o.timing);
    const t = this.timing.o;
    this.free = t.stepMs === 0 && t.prefillMsPerToken === 0 && t.prefillAttnMsPerTokenCtx === 0
      && t.decodeMsPerSeq === 0 && t.decodeMsPerKvToken === 0;
    const lowestEos = o.eosTokenIds.length ? Math.min(...o.eosTokenIds) : o.vocabSize;
    this.drawBound = Math.max(1, Math.min(o.regularVocabSize ?? (lowestEos > 0 ? lowestEos : o.vocabSize), o.vocabSize));
    this.hub = new KvEventHub(o.blockSize, () => this.snapshot());
    if (o.mode === 'sim' && o.deterministic) {
      this.deterministic = new DeterministicTokens({ eosTokenIds: o.eosTokenIds, drawBound: this.drawBound, eosProbability: o.eosProbability, tokenizer: o.deterministic.tokenizer });
    }
    this.ranks = Array.from({ length: Math.max(1, o.dataParallelSize) }, (_, id) => {
      const pool = new KvPool({
        numBlocks: o.numBlocks,
        blockSize: o.blockSize,
        prefixCaching: o.prefixCaching,
        onEvent: (e) => this.hub.add(id, e),
      });
      const sched = new Scheduler(pool, {
        maxNumSeqs: o.maxNumSeqs,
        maxNumBatchedTokens: o.maxNumBatchedTokens,
        chunkedPrefill: o.chunkedPrefill,
      });
      return { id, pool, sched, stepping: false, due: 0, steps: 0, tokensOut: 0 };
    });
  }

  has(id: string): boolean {
    return this.live.has(id);
  }

  get active(): number {
    return this.live.size;
  }

  /** Start a request; outputs arrive through `emit` until every choice finished. */
  submit(req: CoreRequest, emit: (o: CoreOutput) => void): void {
    if (this.closed) throw new SimRequestError('engine is shutting down');
    if (this.live.has(req.id)) throw new SimRequestError(`request ${req.id} is already running`);
    const promptLen = req.prompt.length;
    if (promptLen >= this.o.maxContextLength) {
      throw new SimRequestError(`prompt of ${promptLen} tokens exceeds the context of ${this.o.maxContextLength}`);
    }
    if (Math.ceil((promptLen + 1) / this.o.blockSize) > this.o.numBlocks) {
      throw new SimRequestError(`prompt of ${promptLen} tokens does not fit in the KV cache of ${this.o.numBlocks * this.o.blockSize}`);
    }
    const rank = this.pickRank(req.dpRank);
    const room = this.o.maxContextLength - promptLen;
    const limit = req.maxNewTokens !== undefined ? Math.min(req.maxNewTokens, room) : this.o.mode === 'sim' ? room : promptLen;
    const prompt = Array.from(req.prompt);
    const stop = new Set(req.stopTokenIds);
    const n = Math.max(1, req.n);
    const live: Live = { req, rank, choices: [], open: n, emit };
    const baseSeed = req.seed !== undefined ? (req.seed ^ 0x5bd1e995) >>> 0 : hashString(req.id);
    for (let index = 0; index < n; index++) {
      const gen = new ChoiceGenerator({
        mode: this.o.mode,
        prompt,
        maxNewTokens: limit,
        minNewTokens: req.minNewTokens,
        stopTokenIds: stop,
        eosTokenIds: this.o.eosTokenIds,
        ignoreEos: req.ignoreEos,
        drawBound: this.drawBound,
        eosProbability: this.o.eosProbability,
        seed: (baseSeed + this.o.seed + index * 0x9e3779b9) >>> 0,
        reasoning: this.o.mode === 'sim' ? this.o.reasoning : undefined,
        deterministic: this.deterministic,
      });
      const choice: Choice = {
        key: `${req.id}\u0000${index}`,
        tokens: prompt.slice(),
        promptLen,
        computed: 0,
        cachedTokens: -1,
        kv: KvPool.newSeq(),
        state: 'waiting',
        preemptions: 0,
        index,
        gen,
        req: live,
        sample: () => {
          const token = gen.step();
          return { token, finished: gen.finish !== undefined };
        },
      };
      live.choices.push(choice);
    }
    this.live.set(req.id, live);
    // Choices with nothing to generate end at once.
    for (const c of live.choices) {
      if (c.gen.finish) this.finish(c, c.gen.finish.reason, c.gen.finish.matchedTokenId);
      else {
        if (req.transferredTokens) this.importKv(rank, c, Math.min(req.transferredTokens, promptLen - 1));
        rank.sched.add(c);
      }
    }
    this.hub.flush(rank.id);
    this.kick(rank);
  }

  /**
   * Put `tokens` prompt tokens' KV, received from a prefill worker, into `c`'s blocks as if
   * computed: the cached prefix is shared, the rest allocated and stored (BlockStored
   * events, as decode workers publish them). A pool too short for it leaves the choice to
   * compute its prompt itself.
   */
  private importKv(rank: Rank, c: Choice, tokens: number): void {
    if (tokens <= 0) return;
    const pool = rank.pool;
    pool.hashBlocks(c.tokens, c.kv.hashes);
    pool.acquirePrefix(c.kv, tokens + 1);
    if (!pool.allocate(c.kv, tokens)) {
      pool.release(c.kv);
      return;
    }
    pool.commit(c.kv, c.tokens, tokens);
    c.computed = tokens;
    c.cachedTokens = tokens;
  }

  /**
   * Disaggregated prefill: keep the computed KV of `tokens` (its cached full blocks, on the
   * rank holding its first block) out of eviction and counted as used, as a prefill worker
   * keeps a prompt's blocks until its decode worker took them. Returns the release.
   */
  holdKv(tokens: ArrayLike<number>): () => void {
    const hashes = this.blockHashes(tokens);
    const rank = this.ranks.find((r) => hashes.length > 0 && r.pool.cachedHashes().has(hashes[0]!));
    if (!rank) return () => {};
    const held = rank.pool.pin(hashes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      rank.pool.release(held);
    };
  }

  /** Chained hashes of `tokens`' full blocks, as this engine's KV pool names them. */
  blockHashes(tokens: ArrayLike<number>): number[] {
    return this.ranks[0]!.pool.hashBlocks(tokens);
  }

  /** Stop a request now; its open choices end with finish reason "abort". */
  abort(id: string): boolean {
    const live = this.live.get(id);
    if (!live) return false;
    for (const c of live.choices) {
      if (c.state === 'finished') continue;
      live.rank.sched.remove(c);
      this.finish(c, 'abort');
    }
    this.live.delete(id);
    this.hub.flush(live.rank.id);
    return true;
  }

  /** Drop the prefix cache of every rank that holds no blocks. */
  flushCache(): boolean {
    let ok = true;
    for (const r of this.ranks) {
      ok = r.pool.reset() && ok;
      this.hub.flush(r.id);
    }
    return ok;
  }

  /** Tokens/s generated over the last few seconds. */
  throughput(): number {
    const now = Date.now();
    this.tpsWindow = this.tpsWindow.filter(([t]) => now - t < 5000);
    if (this.tpsWindow.length === 0) return 0;
    const span = Math.max(1000, now - this.tpsWindow[0]![0]);
    return (this.tpsWindow.reduce((a, [, k]) => a + k, 0) * 1000) / span;
  }

  close(): void {
    this.closed = true;
    for (const id of [...this.live.keys()]) this.abort(id);
  }

  private snapshot(): SnapshotBlock[] {
    const out: SnapshotBlock[] = [];
    for (const r of this.ranks) for (const b of r.pool.snapshot()) out.push({ dpRank: r.id, ...b });
    return out;
  }

  private pickRank(dpRank: number | undefined): Rank {
    if (dpRank !== undefined && dpRank >= 0) {
      const r = this.ranks[dpRank];
      if (!r) throw new SimRequestError(`data_parallel_rank ${dpRank} out of range (size ${this.ranks.length})`);
      return r;
    }
    let best = this.ranks[0]!;
    let bestLoad = Infinity;
    for (const r of this.ranks) {
      const load = r.sched.running.length + r.sched.waiting.length;
      if (load < bestLoad) {
        best = r;
        bestLoad = load;
      }
    }
    return best;
  }

  private finish(c: Choice, reason: string, matchedTokenId?: number): void {
    if (c.state !== 'finished') c.req.rank.sched.remove(c);
    const live = c.req;
    live.open--;
    live.emit({
      kind: 'finish',
      index: c.index,
      reason,
      matchedTokenId,
      outputIds: c.gen.output.slice(),
      ...usage(c),
    });
    if (live.open === 0 && this.live.get(live.req.id) === live) this.live.delete(live.req.id);
  }

  private kick(rank: Rank): void {
    if (rank.stepping || !rank.sched.hasWork() || this.closed) return;
    if (this.free) {
      // Steps cost nothing: plan on the next turn, so every request that
      // arrived in this I/O phase joins the batch, then run steps back to back.
      rank.stepping = true;
      setImmediate(() => this.runFree(rank));
      return;
    }
    const step = this.plan(rank);
    if (!step) return;
    rank.stepping = true;
    const now = performance.now();
    // Simulated time runs from where the last step ended; if the event loop
    // fell behind by less than CATCH_UP_MS, the next steps run early to catch
    // up, so rates hold on a busy machine. Further behind, the clock restarts.
    rank.due = (rank.due > now - CATCH_UP_MS ? rank.due : now) + this.timing.wallMs(step.shape);
    const wait = rank.due - now;
    const run = () => this.completeStep(rank, step);
    if (wait >= 1) setTimeout(run, wait);
    else setImmediate(run);
  }

  /** Schedule a step; undefined when nothing can run (a head that can never fit ends with "length"). */
  private plan(rank: Rank): PlannedStep | undefined {
    for (;;) {
      if (!rank.sched.hasWork()) return undefined;
      const step = rank.sched.schedule();
      this.hub.flush(rank.id);
      if (step.entries.length > 0) return step;
      // Nothing fits: the head of the queue can never get its blocks.
      const head = rank.sched.waiting[0];
      if (!head) return undefined;
      this.finish(head as Choice, 'length');
      this.hub.flush(rank.id);
    }
  }

  /**
   * Zero-cost timing (echo, or a sim with every cost at 0): run whole steps
   * in one turn, up to FREE_SLICE_MS, so an 8-token request takes one event
   * loop turn instead of eight and its messages leave in one socket write.
   * Each step still emits its own tokens (one message per token in echo).
   */
  private runFree(rank: Rank): void {
    rank.stepping = false;
    if (this.closed) return;
    const until = performance.now() + FREE_SLICE_MS;
    for (let k = 1; ; k++) {
      const step = this.plan(rank);
      if (!step) return;
      this.applyStep(rank, step);
      if (this.closed) return;
      if ((k & 7) === 0 && performance.now() >= until) break;
    }
    this.kick(rank);
  }

  private completeStep(rank: Rank, step: PlannedStep): void {
    rank.stepping = false;
    if (this.closed) return;
    this.applyStep(rank, step);
    this.kick(rank);
  }

  private applyStep(rank: Rank, step: PlannedStep): void {
    rank.steps++;
    const results = rank.sched.complete(step);
    this.hub.flush(rank.id);
    let produced = 0;
    const trace = this.emitTrace;
    const at = trace ? monotonicMs() : 0;
    for (const { seq, token, finished } of results) {
      const c = seq as Choice;
      produced++;
      if (trace) {
        const id = c.req.req.id;
        let list = trace.get(id);
        if (!list) trace.set(id, (list = []));
        list.push(at, token);
      }
      c.req.emit({ kind: 'tokens', index: c.index, tokenIds: [token], ...usage(c) });
      if (finished) this.finish(c, c.gen.finish!.reason, c.gen.finish!.matchedTokenId);
    }
    if (produced) {
      rank.tokensOut += produced;
      this.tokensOut += produced;
      this.tpsWindow.push([Date.now(), produced]);
      if (this.tpsWindow.length > 4096) this.tpsWindow.splice(0, 2048);
    }
  }
}

/** CLOCK_MONOTONIC in ms: the same clock in every process on the machine (performance.now() is per process). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

function usage(c: Choice): Usage {
  return {
    promptTokens: c.promptLen,
    completionTokens: c.gen.output.length,
    cachedTokens: Math.max(0, c.cachedTokens),
  };
}
