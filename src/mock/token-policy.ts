// How the mock engine picks tokens. Pure and deterministic: no timers, no I/O.

import type { DeterministicTokens } from './script.js';
import { mulberry32 } from './seeded.js';

export type Finish = { reason: 'stop' | 'length'; matchedTokenId?: number };

export interface ChoiceConfig {
  mode: 'echo' | 'sim';
  prompt: readonly number[];
  /** Hard cap on generated tokens (already resolved against the context). */
  maxNewTokens: number;
  minNewTokens: number;
  stopTokenIds: ReadonlySet<number>;
  eosTokenIds: readonly number[];
  ignoreEos: boolean;
  /** sim: tokens are drawn from [0, drawBound). */
  drawBound: number;
  /** sim: chance per step of emitting EOS once min_new_tokens is reached. */
  eosProbability: number;
  seed: number;
  /**
   * sim: open with a reasoning block: `startId`, `thinkTokens` drawn tokens,
   * `endId`, then the answer. EOS and stop ids are held back inside it.
   */
  reasoning?: { startId: number; endId: number; thinkTokens: number };
  /**
   * sim: every token is a pure function of the ids before it (src/mock/script.ts) instead of
   * a seeded draw; `seed` and `reasoning` are not used.
   */
  deterministic?: DeterministicTokens;
}

/** One choice (n > 1 runs several) of one request. */
export class ChoiceGenerator {
  readonly output: number[] = [];
  finish: Finish | undefined;
  private readonly rand: () => number;
  private readonly eos: ReadonlySet<number>;

  constructor(private readonly cfg: ChoiceConfig) {
    this.rand = mulberry32(cfg.seed);
    this.eos = new Set(cfg.eosTokenIds);
    // Nothing to generate at all.
    if (cfg.maxNewTokens <= 0) this.finish = { reason: 'length' };
    else if (cfg.mode === 'echo' && cfg.prompt.length === 0) this.finish = { reason: 'stop' };
  }

  /** Produce the next token; sets `finish` when this choice is over. */
  step(): number {
    if (this.finish) throw new Error('choice already finished');
    const tok = this.cfg.mode === 'echo' ? this.echoToken() : this.simToken();
    this.output.push(tok);
    if (!this.finish && this.output.length >= this.cfg.maxNewTokens) this.finish = { reason: 'length' };
    return tok;
  }

  private echoToken(): number {
    const tok = this.cfg.prompt[this.output.length]!;
    if (this.output.length + 1 === this.cfg.prompt.length) this.finish = { reason: 'stop' };
    return tok;
  }

  private simToken(): number {
    const { cfg } = this;
    if (cfg.deterministic) return this.scriptToken(cfg.deterministic);
    const r = cfg.reasoning;
    if (r) {
      const k = this.output.length;
      if (k === 0) return r.startId;
      if (k === r.thinkTokens + 1) return r.endId;
      if (k <= r.thinkTokens) return this.thinkToken();
    }
    const mayStop = this.output.length >= cfg.minNewTokens;
    if (mayStop && !cfg.ignoreEos && cfg.eosTokenIds.length > 0 && this.rand() < cfg.eosProbability) {
      const eos = cfg.eosTokenIds[0]!;
      this.finish = { reason: 'stop', matchedTokenId: eos };
      return eos;
    }
    let tok = this.draw();
    for (let tries = 0; this.forbidden(tok, mayStop) && tries < 16; tries++) tok = this.draw();
    if (this.forbidden(tok, mayStop)) tok = this.firstAllowed(mayStop);
    if (mayStop && cfg.stopTokenIds.has(tok)) this.finish = { reason: 'stop', matchedTokenId: tok };
    return tok;
  }

  /** Deterministic mode: the history's next token, unless the limits say it may not be emitted here. */
  private scriptToken(d: DeterministicTokens): number {
    const { cfg } = this;
    const h = { prompt: cfg.prompt, output: this.output };
    const mayStop = this.output.length >= cfg.minNewTokens;
    let tok = d.next(h);
    const isEos = this.eos.has(tok);
    if ((isEos && (cfg.ignoreEos || !mayStop)) || (!mayStop && cfg.stopTokenIds.has(tok))) {
      tok = d.filler(h, (t) => this.forbidden(t, mayStop));
    } else if (mayStop && (isEos || cfg.stopTokenIds.has(tok))) {
      this.finish = { reason: 'stop', matchedTokenId: tok };
    }
    return tok;
  }

  private thinkToken(): number {
    let tok = this.draw();
    for (let tries = 0; this.forbidden(tok, false) && tries < 16; tries++) tok = this.draw();
    return this.forbidden(tok, false) ? this.firstAllowed(false) : tok;
  }

  private draw(): number {
    return Math.floor(this.rand() * this.cfg.drawBound);
  }

  // EOS only comes from the EOS branch; stop ids are held back until min_new_tokens.
  private forbidden(tok: number, mayStop: boolean): boolean {
    return this.eos.has(tok) || (!mayStop && this.cfg.stopTokenIds.has(tok));
  }

  private firstAllowed(mayStop: boolean): number {
    for (let t = 0; t < this.cfg.drawBound; t++) if (!this.forbidden(t, mayStop)) return t;
    return 0;
  }
}
