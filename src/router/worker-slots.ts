// The router's view of the pool's workers: a load-table slot per worker, its KV
// event feed (in kv mode) and its KV capacity. Follows the pool as workers are
// added and removed at run time (the pool replaces its array on every change).

import type { KvEvent, KvEventSource, KvEventSink, WorkerLoad } from '../engine/kv-events/index.js';
import { log } from '../log.js';
import type { KvIndex } from './kv-index.js';
import { WorkerKvIngest } from './kv-ingest.js';
import { LoadField, type LoadTable } from './load-table.js';
import type { PredictedBlocks } from './predicted.js';
import { serverInfoOf, type Worker, type WorkerSet } from './worker-pool.js';

export interface Tracked {
  readonly worker: Worker;
  readonly slot: number;
  readonly ingest: WorkerKvIngest;
  source?: KvEventSource;
  /** The worker has published KV events (else its blocks are predicted). */
  eventsSeen: boolean;
  /** Data-parallel ranks, from the engine's server info (dp_size / data_parallel_size); 0 while unknown. */
  dpSize: number;
  /** Settles when the first server info answer (or failure) is in; null after. */
  infoPending: Promise<void> | null;
  /** The engine's declared configuration, from its server info (0 = not reported); for /metrics. */
  declared: EngineDeclared;
}

export interface EngineDeclared {
  /** Running sequences it admits (vLLM max_num_seqs, SGLang max_running_requests). */
  maxNumSeqs: number;
  /** Tokens per KV block (vLLM block_size, SGLang page_size). */
  blockSize: number;
  /** Token budget of one batch (max_num_batched_tokens). */
  maxNumBatchedTokens: number;
}

function positiveInt(args: Record<string, unknown>, ...names: string[]): number {
  for (const n of names) {
    const v = args[n];
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) return v;
  }
  return 0;
}

function declaredOf(args: Record<string, unknown>): EngineDeclared {
  return {
    maxNumSeqs: positiveInt(args, 'max_num_seqs', 'max_running_requests'),
    blockSize: positiveInt(args, 'block_size', 'page_size'),
    maxNumBatchedTokens: positiveInt(args, 'max_num_batched_tokens'),
  };
}

/** The block size the worker's engine declares when its KV events carry another (0: none, or they agree). */
export function declaredMismatch(t: Tracked): number {
  const d = t.declared.blockSize;
  return t.ingest.blockSizeSource === 'events' && d > 0 && d !== t.ingest.blockSize ? d : 0;
}

/** Ranks the router knows a worker has: its reported DP size, or more if its KV events name more. */
export function ranksOf(t: Tracked): number {
  return Math.max(t.dpSize, t.ingest.rankCount, 1);
}

function dpSizeOf(args: Record<string, unknown>): number {
  const v = args['dp_size'] ?? args['data_parallel_size'];
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : 0;
}

export type KvSourceFactory = (o: { url: string; sink: KvEventSink; onLoad?: (l: WorkerLoad) => void; onError?: (err: unknown) => void }) => KvEventSource;

export interface WorkerSlotsOptions {
  /** A worker's block size until its engine or its KV events say (--router-block-size). */
  blockSize: number;
  hashSeed?: number;
  /** Open a KV event source per worker (kv mode with events). */
  kvSource?: KvSourceFactory;
  onRemove?: (t: Tracked) => void;
  /** A worker's block size changed: keys computed at the old size no longer match its blocks. */
  onBlockSize?: (t: Tracked) => void;
  /**
   * The load table is shared with other shards, which track the same workers in the
   * same slots (same registry changes, same order) but at their own pace: a shard must
   * not zero a row another shard already counts requests in. Fresh rows are zero.
   */
  sharedLoad?: boolean;
}

export class WorkerSlots {
  private readonly byId = new Map<number, Tracked>();
  private seen: Worker[] | null = null;
  private nextSlot = 0;
  private readonly free: number[] = [];
  /** Tracked workers in pool order. */
  list: Tracked[] = [];

  constructor(
    private readonly pool: WorkerSet,
    private readonly load: LoadTable,
    private readonly index: KvIndex,
    private readonly predicted: PredictedBlocks,
    private readonly o: WorkerSlotsOptions,
  ) {}

  get(id: number): Tracked | undefined {
    this.sync();
    return this.byId.get(id);
  }

  /** Bring the view in line with the pool (cheap when nothing changed). */
  sync(): void {
    const ws = this.pool.workers;
    if (ws === this.seen) return;
    this.seen = ws;
    const live = new Set<number>();
    for (const w of ws) {
      live.add(w.id);
      if (!this.byId.has(w.id)) this.byId.set(w.id, this.track(w));
    }
    for (const [id, t] of this.byId) {
      if (live.has(id)) continue;
      this.byId.delete(id);
      this.untrack(t);
    }
    this.list = ws.map((w) => this.byId.get(w.id)!);
  }

  close(): void {
    for (const t of this.byId.values()) t.source?.close();
  }

  private allocSlot(): number {
    if (this.nextSlot < this.load.capacity) return this.nextSlot++;
    const s = this.free.shift();
    if (s === undefined) throw new Error(`the router's load table is full (${this.load.capacity} workers)`);
    return s;
  }

  private track(w: Worker): Tracked {
    const slot = this.allocSlot();
    if (!this.o.sharedLoad) this.load.clear(slot);
    this.load.clearRemote(slot);
    const ingest = new WorkerKvIngest(this.index, slot, this.o.blockSize, this.o.hashSeed);
    const t: Tracked = { worker: w, slot, ingest, eventsSeen: false, dpSize: 0, infoPending: null, declared: { maxNumSeqs: 0, blockSize: 0, maxNumBatchedTokens: 0 } };
    const warnMismatch = () => {
      const declared = declaredMismatch(t);
      if (declared) log.warn('the worker\'s KV events are of another block size than its engine declared; indexing at the events\' size', { worker: w.client.url, events: ingest.blockSize, declared });
    };
    ingest.onBlockSize = () => {
      this.predicted.drop(slot);
      this.o.onBlockSize?.(t);
      warnMismatch();
    };
    ingest.onUnapplied = (reason, detail) => log.warn('KV events of this worker cannot be applied to the router\'s index; routing to it falls back on predicted blocks', { worker: w.client.url, reason, detail });
    if (this.o.kvSource) {
      const sink = (events: KvEvent[]) => {
        if (events.length > 0) t.eventsSeen = true;
        for (const e of events) t.ingest.apply(e);
      };
      try {
        t.source = this.o.kvSource({ url: w.client.url, sink, onError: (err) => log.debug('kv events', { worker: w.client.url, error: String(err) }) });
        t.source.start();
      } catch (err) {
        log.warn('cannot subscribe to KV events; predicting this worker\'s cache', { worker: w.client.url, error: String(err) });
      }
    }
    t.infoPending = serverInfoOf(w)
      .then((i) => {
        t.dpSize = dpSizeOf(i.serverArgs);
        t.declared = declaredOf(i.serverArgs);
        ingest.declare(t.declared.blockSize);
        warnMismatch();
        if (i.maxTotalNumTokens > 0) this.load.set(slot, LoadField.CapacityBlocks, Math.floor(i.maxTotalNumTokens / ingest.blockSize));
      })
      .catch(() => {})
      .finally(() => {
        t.infoPending = null;
      });
    return t;
  }

  private untrack(t: Tracked): void {
    t.source?.close();
    t.ingest.clear();
    this.predicted.drop(t.slot);
    this.o.onRemove?.(t);
    this.free.push(t.slot);
  }
}
