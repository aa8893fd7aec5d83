// A request's block keys, per block size. Workers of one model may cache in blocks of
// different sizes (each is indexed at its own: kv-ingest.ts), so the router hashes the
// prompt once for each size among the workers it weighs; almost always that is one.

import { blockKeys, type Lanes } from './hash.js';

export class PromptKeys {
  private size0 = 0;
  private keys0: Float64Array | null = null;
  private others: Map<number, Float64Array> | null = null;

  constructor(
    private readonly tokens: ArrayLike<number>,
    private readonly root: Lanes,
  ) {}

  /** Keys of every full block of `blockSize` tokens, in prefix order. */
  of(blockSize: number): Float64Array {
    if (this.keys0 === null) {
      this.size0 = blockSize;
      return (this.keys0 = blockKeys(this.tokens, blockSize, this.root));
    }
    if (blockSize === this.size0) return this.keys0;
    this.others ??= new Map();
    let k = this.others.get(blockSize);
    if (!k) this.others.set(blockSize, (k = blockKeys(this.tokens, blockSize, this.root)));
    return k;
  }
}
