// Feeding the prefix index from one worker's KV events. The events carry the
// engine's own block hashes, which Portico cannot reproduce; so each stored
// block is re-hashed with Portico's chain (hash.ts) from its token ids and its
// parent's Portico hash, and the engine hash is remembered only to resolve later
// parents and removals. Events name no salt, so they index into the unsalted
// namespace — or, for blocks an engine computed with a LoRA adapter it names, into
// that adapter's namespace (its blocks never match the base model's); blocks of an
// adapter named only by the engine's number are not indexed. Each data-parallel rank's
// blocks are indexed under their own holder (holders.ts): a prefix on rank 1 is not a
// prefix on rank 0. A block whose event names the images it holds has their placeholder
// tokens hashed as the image's ids (hash.ts imageBlockTokens), as a request's prompt is.
//
// Each worker is indexed at its own block size: what its events say (they describe
// the cache as it is), else what its engine declared (vLLM block_size, SGLang
// page_size), else the router's --router-block-size. The router hashes a request at
// the block size of each worker it weighs, so a worker's blocks are only ever matched
// against keys of their own size.

import type { KvBlockRef, KvEvent } from '../engine/kv-events/index.js';
import { chainBlock, imageBlockTokens, keyOf, rootLanes, type Lanes } from './hash.js';
import type { KvIndex } from './kv-index.js';
import { holderOf, MAX_DP_RANKS } from './holders.js';

interface Known {
  key: number;
  a: number;
  b: number;
}

export interface IngestStats {
  stored: number;
  removed: number;
  /** Stored events whose parent was unknown (dropped: their chain cannot be rebuilt). */
  orphans: number;
  /** Stored events whose blocks are not of the worker's block size (not indexed). */
  badSize: number;
  /** Events of a rank at or past MAX_DP_RANKS (not indexed). */
  badRank: number;
  /** Stored events of an adapter the engine named only by number (not indexed). */
  unnamedLora: number;
}

/** Where a worker's block size came from, most trusted last. */
export type BlockSizeSource = 'fallback' | 'engine' | 'events';

/** Why a stored event was not indexed (the keys of IngestStats that count them). */
export type UnappliedReason = 'orphans' | 'badSize' | 'badRank' | 'unnamedLora';
/** Each reason as /metrics and /health name it. */
export const UNAPPLIED_LABELS: readonly [UnappliedReason, string][] = [
  ['orphans', 'orphan'],
  ['badSize', 'block_size'],
  ['badRank', 'dp_rank'],
  ['unnamedLora', 'lora_unnamed'],
];

export class WorkerKvIngest {
  /** Per data-parallel rank: engine hash → Portico block. */
  private readonly ranks = new Map<number, Map<bigint, Known>>();
  readonly stats: IngestStats = { stored: 0, removed: 0, orphans: 0, badSize: 0, badRank: 0, unnamedLora: 0 };
  /** One past the highest rank an event came from (0 before any event). */
  rankCount = 0;
  private readonly root: Lanes;
  /** Per adapter name, its namespace's root. */
  private readonly loraRoots = new Map<string, Lanes>();

  /** Tokens per block of this worker's cache. */
  blockSize: number;
  blockSizeSource: BlockSizeSource = 'fallback';
  /** Called when the block size changes: what was predicted at the old size is stale. */
  onBlockSize: ((bs: number, from: BlockSizeSource) => void) | null = null;
  /** Called the first time stored events of a kind are dropped. */
  onUnapplied: ((reason: UnappliedReason, detail: string) => void) | null = null;

  constructor(
    private readonly index: KvIndex,
    readonly slot: number,
    fallbackBlockSize: number,
    private readonly seed?: number,
  ) {
    this.blockSize = fallbackBlockSize;
    this.root = rootLanes(seed);
  }

  /** The engine declared its block size (server info). Events, once seen, outrank it. */
  declare(bs: number): void {
    if (!Number.isInteger(bs) || bs < 1) return;
    if (this.blockSizeSource !== 'events') this.setBlockSize(bs, 'engine');
  }

  private setBlockSize(bs: number, from: BlockSizeSource): void {
    const changed = bs !== this.blockSize;
    this.blockSizeSource = from;
    if (!changed) return;
    this.clear();
    this.blockSize = bs;
    this.onBlockSize?.(bs, from);
  }

  /** Stored events dropped, all reasons. */
  get unapplied(): number {
    const s = this.stats;
    return s.orphans + s.badSize + s.badRank + s.unnamedLora;
  }

  private drop(reason: UnappliedReason, detail: () => string): void {
    if (this.stats[reason]++ === 0) this.onUnapplied?.(reason, detail());
  }

  private rootOf(lora: string | undefined): Lanes {
    if (lora === undefined) return this.root;
    let r = this.loraRoots.get(lora);
    if (!r) this.loraRoots.set(lora, (r = rootLanes(this.seed, undefined, lora)));
    return r;
  }

  /** Blocks this worker holds (all ranks). */
  get blocks(): number {
    let n = 0;
    for (const m of this.ranks.values()) n += m.size;
    return n;
  }

  apply(e: KvEvent): void {
    if (e.kind !== 'reset') {
      if (e.dpRank < 0 || e.dpRank >= MAX_DP_RANKS) {
        this.drop('badRank', () => `events of data-parallel rank ${e.dpRank} (at most ${MAX_DP_RANKS} ranks are indexed)`);
        return;
      }
      if (e.dpRank >= this.rankCount) this.rankCount = e.dpRank + 1;
    }
    switch (e.kind) {
      case 'stored':
        if (e.loraUnnamed) {
          this.drop('unnamedLora', () => 'blocks of a LoRA adapter the engine names only by number');
          break;
        }
        this.learnBlockSize(e.blockSize, e.blocks);
        this.store(e.dpRank, e.parentHash, e.blocks, e.loraName);
        break;
      case 'removed': {
        const m = this.ranks.get(e.dpRank);
        if (!m) return;
        for (const h of e.hashes) {
          const k = m.get(h);
          if (!k) continue;
          m.delete(h);
          this.index.remove(k.key, holderOf(this.slot, e.dpRank));
          this.stats.removed++;
        }
        break;
      }
      case 'cleared':
        this.dropRank(e.dpRank);
        break;
      case 'reset':
        this.clear();
        break;
    }
  }

  /**
   * The first stored event fixes the worker's block size (its blocks' size, as the
   * event states it or, when it does not, as its first full block shows). Later events
   * of another size are dropped and counted: they cannot be matched.
   */
  private learnBlockSize(stated: number, blocks: readonly { tokenIds: number[] }[]): void {
    if (this.blockSizeSource === 'events') return;
    const bs = stated > 0 ? stated : (blocks[0]?.tokenIds.length ?? 0);
    if (bs < 1) return;
    this.setBlockSize(bs, 'events');
  }

  /** Forget every block of this worker (reset, or the worker left). */
  clear(): void {
    for (const r of [...this.ranks.keys()]) this.dropRank(r);
  }

  private dropRank(rank: number): void {
    const m = this.ranks.get(rank);
    if (!m) return;
    const holder = holderOf(this.slot, rank);
    for (const k of m.values()) this.index.remove(k.key, holder);
    this.ranks.delete(rank);
  }

  private store(rank: number, parentHash: bigint | undefined, blocks: readonly KvBlockRef[], lora?: string): void {
    let m = this.ranks.get(rank);
    if (!m) this.ranks.set(rank, (m = new Map()));
    let parent: Lanes;
    // (A child's parent hash carries its namespace: only the first block needs the root.)
    if (parentHash === undefined) parent = this.rootOf(lora);
    else {
      const p = m.get(parentHash);
      if (!p) {
        this.drop('orphans', () => 'stored blocks whose parent block was never stored (their prefix cannot be rebuilt)');
        return;
      }
      parent = p;
    }
    const bs = this.blockSize;
    const holder = holderOf(this.slot, rank);
    for (const blk of blocks) {
      if (blk.tokenIds.length !== bs) {
        this.drop('badSize', () => `blocks of ${blk.tokenIds.length} tokens where the worker's blocks hold ${bs}`);
        return;
      }
      const cur: Lanes = { a: 0, b: 0 };
      chainBlock(parent, blk.images ? imageBlockTokens(blk.tokenIds, blk.images) : blk.tokenIds, 0, bs, cur);
      const known: Known = { key: keyOf(cur.a, cur.b), a: cur.a, b: cur.b };
      const prev = m.get(blk.hash);
      if (prev) this.index.remove(prev.key, holder);
      m.set(blk.hash, known);
      this.index.add(known.key, holder);
      this.stats.stored++;
      parent = known;
    }
  }
}
