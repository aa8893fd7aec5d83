// Synthetic prompts of an exact token length, made with the target model's own tokenizer
// (as aiperf and guidellm do): a window of a long seeded word corpus is cut to N token ids,
// decoded, and re-encoded; the cut is adjusted until the text encodes to exactly N tokens.

import { resolve } from 'node:path';
import { Model } from '../native/core.js';
import { mulberry32 } from '../mock/seeded.js';

const WORDS = (
  'time person year way day thing man world life hand part child eye woman place work week case point government ' +
  'company number group problem fact river light stone music cloud garden paper window engine market story water ' +
  'morning evening question answer reason letter table mountain forest village city road bridge harbour winter summer ' +
  'colour language history science animal flower kitchen doctor teacher student friend family country island station'
).split(' ');

export interface Tokenizer {
  count(text: string): number;
}

export class PromptMaker implements Tokenizer {
  private readonly model: Model;
  private readonly rand: () => number;
  private readonly pool: Uint32Array;

  constructor(tokenizerDir: string, seed: number) {
    this.model = Model.load(resolve(tokenizerDir));
    this.rand = mulberry32(seed);
    const words: string[] = [];
    for (let i = 0; i < 40_000; i++) words.push(WORDS[Math.floor(this.rand() * WORDS.length)]);
    this.pool = this.model.encode(words.join(' '), false);
  }

  count(text: string): number {
    return this.model.encode(text, false).length;
  }

  /** A text of exactly `n` tokens (n >= 1), from a random place in the corpus. */
  text(n: number): string {
    let ids = this.window(n);
    let best = { text: '', diff: Infinity };
    for (let attempt = 0; attempt < 16; attempt++) {
      const text = this.model.decode(ids, true);
      const got = this.count(text);
      if (got === n) return text;
      if (Math.abs(got - n) < best.diff) best = { text, diff: Math.abs(got - n) };
      // Re-encoding merged or split tokens at the cut: trim or extend by the difference.
      const want = ids.length + (n - got);
      ids = want > 0 && want <= this.pool.length ? this.window(want) : this.window(n);
    }
    return best.text;
  }

  private window(n: number): Uint32Array {
    if (n > this.pool.length) {
      const out = new Uint32Array(n);
      for (let i = 0; i < n; i++) out[i] = this.pool[i % this.pool.length];
      return out;
    }
    const start = Math.floor(this.rand() * (this.pool.length - n + 1));
    return this.pool.subarray(start, start + n);
  }
}
