// The simulator's paged KV cache: fixed-size blocks, prefix caching by
// chained block hashes, and a free pool evicted least-recently-freed first
// (the scheme of vLLM's v1 block manager). Pure bookkeeping: no timers, no I/O.
//
// Every change to the set of cached hashes is reported through `onEvent`, so
// a consumer replaying the events holds exactly `cachedHashes()`.

/** What the pool tells KV-event subscribers. Hashes are safe integers. */
export type PoolEvent =
  | { kind: 'stored'; parentHash: number | undefined; blocks: Array<{ hash: number; tokenIds: number[] }> }
  | { kind: 'removed'; hashes: number[] }
  | { kind: 'cleared' };

export interface KvPoolOptions {
  numBlocks: number;
  blockSize: number;
  /** false: blocks are never shared or kept after free. Default true. */
  prefixCaching?: boolean;
  onEvent?: (e: PoolEvent) => void;
}

/** A sequence's hold on the pool. */
export interface SeqBlocks {
  /** Physical block ids, in token order. */
  blocks: number[];
  /** Chained hashes of the sequence's full blocks computed so far. */
  hashes: number[];
  /** How many of `blocks` are registered in the prefix cache (or deduplicated). */
  committed: number;
}

const NO_HASH = -1;

export class KvPool {
  readonly numBlocks: number;
  readonly blockSize: number;
  private readonly caching: boolean;
  private readonly onEvent: (e: PoolEvent) => void;
  private readonly refs: Int32Array;
  private readonly blockHash: number[];
  private readonly blockTokens: Array<number[] | undefined>;
  /** Free blocks with no cached content: used first. */
  private readonly freeClean: number[] = [];
  /** Free blocks still in the prefix cache, least recently freed first (Map keeps insertion order). */
  private readonly freeCached = new Map<number, true>();
  private readonly byHash = new Map<number, number>();
  /** Counters for GetLoads. */
  lookups = 0;
  hits = 0;

  constructor(o: KvPoolOptions) {
    if (o.numBlocks < 1 || o.blockSize < 1) throw new Error('KV pool needs at least one block of at least one token');
    this.numBlocks = o.numBlocks;
    this.blockSize = o.blockSize;
    this.caching = o.prefixCaching ?? true;
    this.onEvent = o.onEvent ?? (() => {});
    this.refs = new Int32Array(o.numBlocks);
    this.blockHash = new Array<number>(o.numBlocks).fill(NO_HASH);
    this.blockTokens = new Array(o.numBlocks);
    for (let b = o.numBlocks - 1; b >= 0; b--) this.freeClean.push(b);
  }

  static newSeq(): SeqBlocks {
    return { blocks: [], hashes: [], committed: 0 };
  }

  /** Blocks in the free pool (cached or not): what allocation can use. */
  freeBlocks(): number {
    return this.freeClean.length + this.freeCached.size;
  }

  /** Blocks held by at least one sequence. */
  usedBlocks(): number {
    return this.numBlocks - this.freeBlocks();
  }

  /** Share of blocks held by sequences, in [0, 1]. */
  usage(): number {
    return this.usedBlocks() / this.numBlocks;
  }

  /** Hashes currently in the prefix cache (what KV events describe). */
  cachedHashes(): Set<number> {
    return new Set(this.byHash.keys());
  }

  /** Full blocks of the cache, each with its parent hash, in a valid replay order. */
  snapshot(): Array<{ hash: number; parentHash: number | undefined; tokenIds: number[] }> {
    const out: Array<{ hash: number; parentHash: number | undefined; tokenIds: number[] }> = [];
    for (const [hash, b] of this.byHash) out.push({ hash, parentHash: this.parentOf.get(hash), tokenIds: this.blockTokens[b]! });
    return out;
  }

  private readonly parentOf = new Map<number, number | undefined>();

  /**
   * Chained hashes of `tokens`' full blocks, reusing `prev` (the hashes
   * already computed for the same sequence).
   */
  hashBlocks(tokens: ArrayLike<number>, prev: number[] = []): number[] {
    const bs = this.blockSize;
    const full = Math.floor(tokens.length / bs);
    const out = prev.length > full ? prev.slice(0, full) : prev;
    for (let i = out.length; i < full; i++) out.push(blockHash(i === 0 ? undefined : out[i - 1], tokens, i * bs, bs));
    return out;
  }

  /**
   * Take the longest cached prefix of `seq` (whose `hashes` are set), never
   * all of `maxTokens`: at least one token is left to compute. Returns the
   * number of cached tokens now held by `seq`.
   */
  acquirePrefix(seq: SeqBlocks, maxTokens: number): number {
    if (seq.blocks.length) throw new Error('acquirePrefix on a sequence holding blocks');
    const maxBlocks = Math.floor(Math.max(0, maxTokens - 1) / this.blockSize);
    this.lookups += maxTokens;
    if (!this.caching) return 0;
    for (let i = 0; i < Math.min(maxBlocks, seq.hashes.length); i++) {
      const b = this.byHash.get(seq.hashes[i]!);
      if (b === undefined) break;
      if (this.refs[b] === 0) this.freeCached.delete(b);
      this.refs[b]!++;
      seq.blocks.push(b);
    }
    seq.committed = seq.blocks.length;
    const cached = seq.blocks.length * this.blockSize;
    this.hits += cached;
    return cached;
  }

  /**
   * Hold the cached blocks of the longest cached prefix of `hashes` (counted as no lookup):
   * KV kept for another worker to take. release() gives them back.
   */
  pin(hashes: number[]): SeqBlocks {
    const seq = KvPool.newSeq();
    if (!this.caching) return seq;
    for (const h of hashes) {
      const b = this.byHash.get(h);
      if (b === undefined) break;
      if (this.refs[b] === 0) this.freeCached.delete(b);
      this.refs[b]!++;
      seq.blocks.push(b);
    }
    seq.committed = seq.blocks.length;
    return seq;
  }

  /** Blocks `seq` still needs to hold `numTokens` tokens. */
  blocksNeeded(seq: SeqBlocks, numTokens: number): number {
    return Math.max(0, Math.ceil(numTokens / this.blockSize) - seq.blocks.length);
  }

  /** Grow `seq` to hold `numTokens` tokens; false (and no change) if the pool is short. */
  allocate(seq: SeqBlocks, numTokens: number): boolean {
    const need = this.blocksNeeded(seq, numTokens);
    if (need > this.freeBlocks()) return false;
    let evicted: number[] | undefined;
    for (let k = 0; k < need; k++) {
      let b = this.freeClean.pop();
      if (b === undefined) {
        b = this.freeCached.keys().next().value as number;
        this.freeCached.delete(b);
      }
      const h = this.blockHash[b]!;
      if (h !== NO_HASH) {
        this.byHash.delete(h);
        this.parentOf.delete(h);
        this.blockHash[b] = NO_HASH;
        this.blockTokens[b] = undefined;
        (evicted ??= []).push(h);
      }
      this.refs[b] = 1;
      seq.blocks.push(b);
    }
    if (evicted) this.onEvent({ kind: 'removed', hashes: evicted });
    return true;
  }

  /**
   * Register `seq`'s blocks that are full of computed tokens. `tokens` is the
   * sequence so far; `computed` how many of them have KV.
   */
  commit(seq: SeqBlocks, tokens: ArrayLike<number>, computed: number): void {
    if (!this.caching) return;
    const full = Math.min(Math.floor(computed / this.blockSize), seq.blocks.length);
    if (full <= seq.committed) return;
    this.hashBlocks(tokens, seq.hashes);
    let run: Array<{ hash: number; tokenIds: number[] }> | undefined;
    let runParent: number | undefined;
    const flush = () => {
      if (run) this.onEvent({ kind: 'stored', parentHash: runParent, blocks: run });
      run = undefined;
    };
    for (let i = seq.committed; i < full; i++) {
      const h = seq.hashes[i]!;
      const b = seq.blocks[i]!;
      if (this.byHash.has(h)) {
        // Same content computed by another sequence: keep the first copy.
        flush();
        continue;
      }
      const tokenIds = Array.from({ length: this.blockSize }, (_, k) => tokens[i * this.blockSize + k]!);
      const parent = i === 0 ? undefined : seq.hashes[i - 1];
      this.byHash.set(h, b);
      this.parentOf.set(h, parent);
      this.blockHash[b] = h;
      this.blockTokens[b] = tokenIds;
      if (!run) {
        run = [];
        runParent = parent;
      }
      run.push({ hash: h, tokenIds });
    }
    flush();
    seq.committed = full;
  }

  /**
   * Release `seq`'s blocks. The tail goes to the free pool first, so a
   * prompt's later blocks are evicted before its shared head.
   */
  release(seq: SeqBlocks): void {
    for (let i = seq.blocks.length - 1; i >= 0; i--) {
      const b = seq.blocks[i]!;
      if (--this.refs[b]! > 0) continue;
      if (this.blockHash[b] === NO_HASH) this.freeClean.push(b);
      else this.freeCached.set(b, true);
    }
    seq.blocks = [];
    seq.committed = 0;
  }

  /** Drop the whole prefix cache (only blocks nobody holds). */
  reset(): boolean {
    if (this.usedBlocks() > 0) return false;
    for (const b of this.byHash.values()) {
      this.blockHash[b] = NO_HASH;
      this.blockTokens[b] = undefined;
      this.freeCached.delete(b);
      this.freeClean.push(b);
    }
    this.byHash.clear();
    this.parentOf.clear();
    this.onEvent({ kind: 'cleared' });
    return true;
  }
}

/**
 * Chained hash of one block: 53 bits from two 32-bit multiplicative lanes
 * seeded with the parent's hash, so equal blocks after different prefixes
 * differ.
 */
export function blockHash(parent: number | undefined, tokens: ArrayLike<number>, start: number, len: number): number {
  const p = parent ?? 0x2545f491;
  let a = (p % 0x100000000) ^ 0x9e3779b9;
  let b = Math.floor(p / 0x100000000) ^ 0x85ebca6b;
  for (let i = start; i < start + len; i++) {
    const t = tokens[i]! >>> 0;
    a = Math.imul(a ^ t, 0x01000193);
    a ^= a >>> 15;
    b = Math.imul(b + t, 0xc2b2ae35);
    b ^= b >>> 13;
  }
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
  b = Math.imul(b ^ (b >>> 16), 0x27d4eb2f) ^ a;
  return (b & 0x1fffff) * 0x100000000 + (a >>> 0);
}
