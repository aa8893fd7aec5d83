// One model's router: direct overrides, session affinity, the policy for the
// mode (load-only or KV cost), load accounting per dispatch, and the pending
// queue while every worker is busy.

import { createKvEventSource } from '../engine/kv-events/index.js';
import { rootLanes } from './hash.js';
import { PromptKeys } from './prompt-keys.js';
import { kvCost, softmaxPick } from './cost.js';
import { DirectRouteError, DpRankError, QueueRejectedError } from './errors.js';
import { holderOf, MAX_DP_RANKS } from './holders.js';
import { KvIndex } from './kv-index.js';
import { LoadField, LoadTable } from './load-table.js';
import { DEFAULT_ROUTER_OPTIONS, type RouterOptions } from './options.js';
import { pickLeastLoaded, pickPowerOfTwo, pickRandom } from './policies.js';
import { PredictedBlocks } from './predicted.js';
import { InflightBlocks } from './inflight.js';
import { PendingQueue, policyKey, type Queued } from './queue.js';
import { SessionAffinity } from './session-affinity.js';
import { SharedSessionAffinity } from './shared-session-affinity.js';
import { isBusy, type BusyThresholds } from './thresholds.js';
import type { Dispatch, RouteHints, RouteRequest, Router } from './types.js';
import { NoWorkerError, type WorkerSet } from './worker-pool.js';
import { ranksOf, WorkerSlots, type KvSourceFactory, type Tracked } from './worker-slots.js';

export interface RouterDeps {
  /** Called with the queue length whenever it changes (the queued_requests gauge). */
  onQueueLength?: (n: number) => void;
  /** KV event sources (default: each worker's gRPC stream). */
  kvSource?: KvSourceFactory;
  /** A load table shared with other shards. */
  loadBuffer?: SharedArrayBuffer;
  /**
   * Requests waiting in every shard's queue, one Int32 shared by the shards: the
   * queue's max size then bounds them all together. Each shard keeps its own waiting
   * requests (and their order); this counts them.
   */
  queueDepth?: Int32Array;
  /** Session pins shared with other shards (SharedSessionAffinity.buffer()). */
  sessionTable?: SharedArrayBuffer;
  rand?: () => number;
  now?: () => number;
}

interface Waiting extends Queued {
  req: RouteRequest;
  keys: PromptKeys | null;
  arrived: number;
  resolve(d: Dispatch): void;
  reject(e: unknown): void;
  cleanup(): void;
}

export class ModelRouter implements Router {
  readonly opts: RouterOptions;
  readonly index = new KvIndex();
  readonly load: LoadTable;
  readonly predicted: PredictedBlocks;
  readonly inflight: InflightBlocks;
  readonly slots: WorkerSlots;
  readonly thresholds: BusyThresholds;
  private readonly affinity: SessionAffinity | SharedSessionAffinity | null;
  private readonly queue = new PendingQueue<Waiting>();
  /** Per holder (worker slot × DP rank): the last match's overlap. */
  private readonly overlap: Uint32Array;
  /** The keys `overlap` was last matched for. */
  private matched: Float64Array | null = null;
  /** Per candidate of the last kv selection: its overlap in its own blocks. */
  private readonly candOverlap: Uint32Array;
  /** Per holder: requests this router has pinned to that rank and not yet finished. */
  private readonly rankInflight: Int32Array;
  /** Per worker slot: where the next tie among its ranks starts (spreads new prefixes). */
  private readonly rankTurn: Uint32Array;
  private readonly costs: Float64Array;
  private readonly rand: () => number;
  private readonly now: () => number;
  private seq = 0;
  private poll: NodeJS.Timeout | null = null;
  private readonly unsaltedRoot;
  /**
   * Called with each dispatch's block keys (kv mode), so that other frontend replicas
   * learn where this one sent the prefix (replica sync, src/events/replica-sync.ts).
   */
  onRoute: ((t: Tracked, rank: number, keys: Float64Array) => void) | null = null;

  constructor(
    readonly pool: WorkerSet,
    opts: Partial<RouterOptions> = {},
    private readonly deps: RouterDeps = {},
  ) {
    this.opts = { ...DEFAULT_ROUTER_OPTIONS, ...opts };
    const o = this.opts;
    this.rand = deps.rand ?? Math.random;
    this.now = deps.now ?? (() => performance.now());
    this.load = new LoadTable(o.maxWorkers, deps.loadBuffer);
    this.predicted = new PredictedBlocks(this.index, o.predictedTtlSecs * 1000, this.now);
    this.inflight = new InflightBlocks(this.index, Math.min(o.predictedTtlSecs, o.inflightTtlSecs) * 1000, this.now);
    this.overlap = new Uint32Array(o.maxWorkers * MAX_DP_RANKS);
    this.rankInflight = new Int32Array(o.maxWorkers * MAX_DP_RANKS);
    this.rankTurn = new Uint32Array(o.maxWorkers);
    this.costs = new Float64Array(o.maxWorkers);
    this.candOverlap = new Uint32Array(o.maxWorkers);
    const ttl = o.sessionAffinityTtlSecs * 1000;
    this.affinity = ttl <= 0 ? null : deps.sessionTable ? new SharedSessionAffinity(deps.sessionTable, ttl) : new SessionAffinity(ttl, this.now);
    this.thresholds = {
      queueThreshold: o.queueThreshold,
      maxBatchedTokens: o.maxBatchedTokens,
      activePrefillTokens: o.activePrefillTokensThreshold,
      activeDecodeBlocks: o.activeDecodeBlocksThreshold,
    };
    const kvSource = o.mode === 'kv' && o.kvEvents ? (deps.kvSource ?? createKvEventSource) : undefined;
    this.slots = new WorkerSlots(pool, this.load, this.index, this.predicted, {
      blockSize: o.blockSize,
      hashSeed: o.hashSeed,
      kvSource,
      sharedLoad: deps.loadBuffer !== undefined,
      onRemove: (t) => {
        this.affinity?.forgetWorker(t.worker.id);
        this.inflight.drop(t.slot);
      },
      onBlockSize: (t) => this.inflight.drop(t.slot),
    });
    this.unsaltedRoot = rootLanes(o.hashSeed);
    this.slots.sync();
  }

  get queued(): number {
    return this.queue.size;
  }

  /** True while any threshold can make a worker busy (then requests may wait). */
  get queueing(): boolean {
    const t = this.thresholds;
    return t.queueThreshold !== undefined || t.activePrefillTokens !== undefined || t.activeDecodeBlocks !== undefined;
  }

  setThresholds(t: { activePrefillTokens?: number | null; activeDecodeBlocks?: number | null }): void {
    if (t.activePrefillTokens !== undefined) this.thresholds.activePrefillTokens = t.activePrefillTokens ?? undefined;
    if (t.activeDecodeBlocks !== undefined) this.thresholds.activeDecodeBlocks = t.activeDecodeBlocks ?? undefined;
    this.drain();
  }

  /** Block keys of a request in its namespace (salt, adapter), computed per block size on demand. */
  keysOf(req: RouteRequest): PromptKeys {
    this.predicted.sweep();
    this.inflight.sweep();
    if (req.keys) return req.keys;
    const h = req.hints;
    const root = h.cacheSalt || h.lora ? rootLanes(this.opts.hashSeed, h.cacheSalt, h.lora) : this.unsaltedRoot;
    return (req.keys = new PromptKeys(req.tokens, root));
  }

  /** Fill `overlap` for these keys. */
  private match(keys: Float64Array): number {
    this.matched = keys;
    return this.index.match(keys, this.overlap);
  }

  validate(h: RouteHints): void {
    if (h.workerId === undefined) {
      if (this.opts.mode === 'direct') throw new DirectRouteError();
      return;
    }
    this.slots.sync();
    const t = this.slots.get(this.pool.pickById(h.workerId).id)!;
    const ranks = ranksOf(t);
    if (h.dpRank !== undefined && t.dpSize > 0 && h.dpRank >= ranks) throw new DpRankError(h.dpRank, t.worker.id, ranks);
  }

  route(req: RouteRequest): Dispatch | Promise<Dispatch> {
    this.slots.sync();
    const h = req.hints;
    const kv = this.opts.mode === 'kv';
    if (h.workerId !== undefined) {
      const w = this.pool.pickById(h.workerId);
      const t = this.slots.get(w.id)!;
      const keys = kv ? this.keysOf(req) : null;
      return this.dispatchKnown(t, req, keys, keys ? this.overlapOn(t, keys, h.dpRank) : 0);
    }
    if (this.opts.mode === 'direct') throw new DirectRouteError();
    const keys = kv ? this.keysOf(req) : null;
    if (this.affinity && h.sessionId) {
      const id = this.affinity.lookup(h.sessionId);
      const t = id === undefined ? undefined : this.slots.get(id);
      if (t && t.worker.healthy) return this.dispatchKnown(t, req, keys, keys ? this.overlapOn(t, keys, h.dpRank) : 0);
    }
    const cands = this.candidates(false, req.exclude);
    if (cands.length === 0) {
      if (!this.queueing || !this.slots.list.some((t) => t.worker.healthy && !req.exclude?.has(t.worker.id))) throw new NoWorkerError(this.pool.model);
      return this.enqueue(req, keys);
    }
    const [t, overlap] = this.select(cands, req, keys);
    return this.dispatchKnown(t, req, keys, overlap);
  }

  /**
   * Dispatch, but in kv mode first wait for the worker's first server info when it is
   * still on its way (right after the worker joined): its DP size decides whether the
   * request is pinned to a rank. The overlap is matched again after the wait.
   */
  private dispatchKnown(t: Tracked, req: RouteRequest, keys: PromptKeys | null, overlap: number): Dispatch | Promise<Dispatch> {
    const pending = keys ? t.infoPending : null;
    if (!pending) return this.dispatch(t, req, keys, overlap, 0);
    return pending.then(() => this.dispatch(t, req, keys, this.overlapOn(t, keys!, req.hints.dpRank), 0));
  }

  close(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    this.slots.close();
    for (let e = this.queue.pop(); e; e = this.queue.pop()) {
      this.countWaiting(-1);
      e.cleanup();
      e.reject(new NoWorkerError(this.pool.model));
    }
  }

  /** Healthy workers (not in `exclude`); with queueing on, only those not busy (unless `all`). */
  candidates(all: boolean, exclude?: ReadonlySet<number>): Tracked[] {
    const out: Tracked[] = [];
    const q = !all && this.queueing;
    for (const t of this.slots.list) {
      if (!t.worker.healthy) continue;
      if (exclude !== undefined && exclude.has(t.worker.id)) continue;
      if (q && isBusy(this.load, t.slot, this.thresholds)) continue;
      out.push(t);
    }
    return out;
  }

  private overlapOn(t: Tracked, keys: PromptKeys, rank: number | undefined): number {
    this.match(keys.of(t.ingest.blockSize));
    return this.workerOverlap(t, rank);
  }

  /**
   * A worker's overlap after match(): on the pinned rank, else on its best rank (a
   * request the router pins follows its prefix to that rank).
   */
  private workerOverlap(t: Tracked, rank: number | undefined): number {
    if (rank !== undefined) return rank < MAX_DP_RANKS ? this.overlap[holderOf(t.slot, rank)]! : 0;
    const n = Math.min(ranksOf(t), MAX_DP_RANKS);
    let best = this.overlap[holderOf(t.slot, 0)]!;
    for (let r = 1; r < n; r++) best = Math.max(best, this.overlap[holderOf(t.slot, r)]!);
    return best;
  }

  /**
   * After match(): the rank holding most of the prompt; ties go to the rank with fewer
   * requests pinned by this router, then to the ranks in turn.
   */
  private bestRank(t: Tracked): number {
    const n = Math.min(ranksOf(t), MAX_DP_RANKS);
    const start = this.rankTurn[t.slot]!++ % n;
    let best = 0;
    let bestOverlap = -1;
    let bestLoad = Infinity;
    for (let i = 0; i < n; i++) {
      const r = (start + i) % n;
      const hd = holderOf(t.slot, r);
      const ov = this.overlap[hd]!;
      const load = this.rankInflight[hd]!;
      if (ov > bestOverlap || (ov === bestOverlap && load < bestLoad)) {
        best = r;
        bestOverlap = ov;
        bestLoad = load;
      }
    }
    return best;
  }

  /** The worker for a request among `cands`, and its overlap in blocks. */
  select(cands: Tracked[], req: RouteRequest, keys: PromptKeys | null): [Tracked, number] {
    const n = cands.length;
    switch (this.opts.mode) {
      case 'kv': {
        const o = this.opts;
        const pinned = req.hints.dpRank;
        let matchedSize = 0;
        for (let i = 0; i < n; i++) {
          const c = cands[i]!;
          // Each worker is matched in its own block size (nearly always one size for all).
          const bs = c.ingest.blockSize;
          if (bs !== matchedSize) {
            this.match(keys!.of(bs));
            matchedSize = bs;
          }
          const overlap = this.workerOverlap(c, pinned);
          this.candOverlap[i] = overlap;
          this.costs[i] = kvCost(req.tokens.length, bs, o.prefillWeight, {
            overlapBlocks: overlap,
            activePrefillTokens: this.load.get(c.slot, LoadField.PrefillTokens),
            activeDecodeBlocks: this.load.get(c.slot, LoadField.DecodeBlocks),
          });
        }
        const pick = softmaxPick(this.costs, n, o.temperature, this.rand);
        return [cands[pick]!, this.candOverlap[pick]!];
      }
      case 'random':
        return [cands[pickRandom(n, this.rand)]!, 0];
      case 'least-loaded':
        return [cands[pickLeastLoaded(cands, this.load, this.rand)]!, 0];
      case 'power-of-two':
        return [cands[pickPowerOfTwo(cands, this.load, this.rand)]!, 0];
      default: {
        // round-robin: the pool's own rotation, among the candidates.
        if (n === this.slots.list.length) return [this.slots.get(this.pool.pick().id)!, 0];
        const t = cands[this.seq++ % n]!;
        return [t, 0];
      }
    }
  }

  private dispatch(t: Tracked, req: RouteRequest, promptKeys: PromptKeys | null, overlapBlocks: number, queuedMs: number): Dispatch {
    const o = this.opts;
    const h = req.hints;
    const bs = t.ingest.blockSize;
    const keys = promptKeys ? promptKeys.of(bs) : null;
    const slot = t.slot;
    const ranks = ranksOf(t);
    if (h.dpRank !== undefined && t.dpSize > 0 && h.dpRank >= ranks) throw new DpRankError(h.dpRank, t.worker.id, ranks);
    // A worker with several DP ranks: pin the request to the rank holding its prefix
    // (kv mode; the selection has just matched these keys, unless it last matched
    // another block size's), unless it names one.
    if (keys && ranks > 1 && h.dpRank === undefined && this.matched !== keys) this.match(keys);
    const rank = h.dpRank ?? (keys && ranks > 1 ? this.bestRank(t) : undefined);
    const holder = rank !== undefined && rank < MAX_DP_RANKS ? holderOf(slot, rank) : rank === undefined ? holderOf(slot, 0) : -1;
    // KV the request adds: its blocks not already held there (see cost.ts).
    const promptBlocks = Math.max(Math.ceil(req.tokens.length / bs) - overlapBlocks, 0);
    const oslBlocks = o.trackOutputBlocks && h.osl ? Math.ceil(h.osl / bs) : 0;
    // A decode worker computes no prompt: its KV comes from a prefill worker (whose own
    // router counts the prefill), so its prefill-token load and busy threshold stay clear.
    let prefill = t.worker.role === 'decode' ? 0 : Math.max(req.tokens.length - overlapBlocks * bs, 0);
    let outBlocks = oslBlocks;
    this.load.add(slot, LoadField.PrefillTokens, prefill);
    this.load.add(slot, LoadField.DecodeBlocks, promptBlocks + outBlocks);
    this.load.add(slot, LoadField.Requests, 1);
    if (keys && keys.length > 0 && !req.ephemeral && holder >= 0) {
      const predictedOnly = !t.eventsSeen || h.cacheSalt || h.lora;
      if (predictedOnly) this.predicted.insert(holder, keys);
      else if (overlapBlocks < keys.length) this.inflight.insert(holder, keys.subarray(overlapBlocks));
      this.onRoute?.(t, rank ?? 0, keys);
    }
    const pinnedHolder = rank !== undefined ? holder : -1;
    if (pinnedHolder >= 0) this.rankInflight[pinnedHolder]!++;
    if (this.affinity && h.sessionId) this.affinity.pin(h.sessionId, t.worker.id);
    let finished = false;
    return {
      worker: t.worker,
      overlapBlocks,
      queuedMs,
      dpRank: rank,
      firstToken: () => {
        if (prefill === 0) return;
        this.load.add(slot, LoadField.PrefillTokens, -prefill);
        prefill = 0;
        if (this.queue.size > 0) this.drain();
      },
      output: (total) => {
        if (!o.trackOutputBlocks) return;
        const want = Math.max(Math.ceil(total / bs), oslBlocks);
        if (want > outBlocks) {
          this.load.add(slot, LoadField.DecodeBlocks, want - outBlocks);
          outBlocks = want;
        }
      },
      done: () => {
        if (finished) return;
        finished = true;
        this.load.add(slot, LoadField.PrefillTokens, -prefill);
        prefill = 0;
        this.load.add(slot, LoadField.DecodeBlocks, -(promptBlocks + outBlocks));
        this.load.add(slot, LoadField.Requests, -1);
        if (pinnedHolder >= 0) this.rankInflight[pinnedHolder]!--;
        if (this.queue.size > 0) this.drain();
      },
    };
  }

  /** The tracked worker whose URL is `url` (as `canon` spells URLs), if any. */
  trackedByUrl(url: string, canon: (u: string) => string = (u) => u): Tracked | undefined {
    this.slots.sync();
    return this.slots.list.find((t) => canon(t.worker.client.url) === url);
  }

  /**
   * Another replica sent a request with these block keys to worker `t` (rank `rank`):
   * index them here too, the way this router indexes its own dispatches (a short-lived
   * insert while the worker's events will confirm it, else a predicted one).
   */
  peerRoute(t: Tracked, rank: number, keys: Float64Array): void {
    if (keys.length === 0 || rank < 0 || rank >= MAX_DP_RANKS) return;
    const holder = holderOf(t.slot, rank);
    if (t.eventsSeen) this.inflight.insert(holder, keys);
    else this.predicted.insert(holder, keys);
  }

  private enqueue(req: RouteRequest, keys: PromptKeys | null): Promise<Dispatch> {
    const o = this.opts;
    const waiting = this.deps.queueDepth ? Atomics.load(this.deps.queueDepth, 0) : this.queue.size;
    if (waiting >= o.queueMaxSize) {
      throw new QueueRejectedError(o.queueRejectStatus, o.retryAfterSecs, 'full', `${o.queueMaxSize} waiting`);
    }
    const h = req.hints;
    const arrived = this.now();
    // The work estimate orders the queue: the best overlap at the first worker's block size.
    const bs = this.slots.list[0]?.ingest.blockSize ?? o.blockSize;
    const overlapBlocks = keys ? this.match(keys.of(bs)) : 0;
    const workTokens = Math.max(req.tokens.length - overlapBlocks * bs, 0) + (h.osl ?? 0);
    return new Promise<Dispatch>((resolve, reject) => {
      const e: Waiting = {
        strict: h.strictPriority ?? 0,
        key: policyKey(o.queuePolicy, { arrivalMs: arrived, priority: h.priority ?? 0, workTokens }, o.priorityShiftMs),
        seq: this.seq++,
        pos: -1,
        req,
        keys,
        arrived,
        resolve,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          req.signal?.removeEventListener('abort', onAbort);
        },
      };
      const leave = (err: unknown) => {
        if (!this.queue.remove(e)) return;
        this.countWaiting(-1);
        e.cleanup();
        this.deps.onQueueLength?.(this.queue.size);
        reject(err);
      };
      const timer = setTimeout(() => leave(new QueueRejectedError(o.queueRejectStatus, o.retryAfterSecs, 'timeout', `${o.queueTimeoutSecs} s`)), o.queueTimeoutSecs * 1000);
      const onAbort = () => leave(req.signal?.reason ?? new Error('aborted'));
      req.signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(e);
      this.countWaiting(1);
      this.deps.onQueueLength?.(this.queue.size);
      this.poll ??= setInterval(() => this.drain(), 20);
      this.poll.unref();
    });
  }

  private countWaiting(delta: number): void {
    if (this.deps.queueDepth) Atomics.add(this.deps.queueDepth, 0, delta);
  }

  /** Admit waiting requests, best first, while some worker is not busy. */
  drain(): void {
    while (this.queue.size > 0) {
      const cands = this.candidates(false);
      if (cands.length === 0) break;
      const e = this.queue.pop()!;
      this.countWaiting(-1);
      e.cleanup();
      try {
        const [t, overlap] = this.select(cands, e.req, e.keys);
        e.resolve(this.dispatch(t, e.req, e.keys, overlap, this.now() - e.arrived));
      } catch (err) {
        e.reject(err);
      }
    }
    if (this.queue.size === 0 && this.poll) {
      clearInterval(this.poll);
      this.poll = null;
    }
    this.deps.onQueueLength?.(this.queue.size);
  }
}
