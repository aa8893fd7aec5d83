// One data-parallel rank's scheduler, shaped like vLLM's v1 scheduler:
// a running queue served first (decode and unfinished prefill chunks), then
// the waiting queue in arrival order, under a per-step token budget
// (max_num_batched_tokens) and a cap on running sequences (max_num_seqs).
// Long prompts are prefilled in chunks. When the KV pool cannot grow a
// running sequence, the most recently admitted one is preempted: its blocks
// are freed and it goes back to the head of the waiting queue to be
// recomputed (its prefix may still be cached).
//
// Pure: `schedule()` plans a step, `complete()` applies it after the caller
// waited the step's time. No timers here.

import { KvPool, type SeqBlocks } from './kv-pool.js';
import type { StepShape } from './timing.js';

/** One choice of one request: what the scheduler runs. */
export interface Seq {
  /** Unique per rank. */
  readonly key: string;
  /** Prompt followed by generated tokens. */
  readonly tokens: number[];
  readonly promptLen: number;
  /** Tokens whose KV is computed. */
  computed: number;
  /** Prompt tokens served from the prefix cache at first admission (-1 = not admitted yet). */
  cachedTokens: number;
  readonly kv: SeqBlocks;
  state: 'waiting' | 'running' | 'finished';
  preemptions: number;
  /** Produce the next token; returns true when the choice is over. */
  sample(): { token: number; finished: boolean };
}

export interface SchedulerOptions {
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  /** Default true. */
  chunkedPrefill?: boolean;
}

export interface PlannedStep {
  entries: Array<{ seq: Seq; newTokens: number }>;
  shape: StepShape;
  preempted: Seq[];
}

export interface StepResult {
  seq: Seq;
  token: number;
  finished: boolean;
}

export class Scheduler {
  readonly waiting: Seq[] = [];
  readonly running: Seq[] = [];
  preemptions = 0;
  private readonly chunked: boolean;

  constructor(readonly pool: KvPool, readonly o: SchedulerOptions) {
    this.chunked = o.chunkedPrefill ?? true;
  }

  add(seq: Seq): void {
    seq.state = 'waiting';
    this.waiting.push(seq);
  }

  /** Drop a sequence wherever it is; its blocks are freed at once. */
  remove(seq: Seq): void {
    const q = seq.state === 'running' ? this.running : this.waiting;
    const i = q.indexOf(seq);
    if (i >= 0) q.splice(i, 1);
    this.pool.release(seq.kv);
    seq.state = 'finished';
  }

  hasWork(): boolean {
    return this.running.length > 0 || this.waiting.length > 0;
  }

  /** KV tokens held by running sequences. */
  activeTokens(): number {
    let n = 0;
    for (const s of this.running) n += s.computed;
    return n;
  }

  /** Prompt tokens of waiting sequences (not yet checked against the cache). */
  waitingTokens(): number {
    let n = 0;
    for (const s of this.waiting) n += s.tokens.length - s.computed;
    return n;
  }

  schedule(): PlannedStep {
    let budget = this.o.maxNumBatchedTokens;
    const entries: PlannedStep['entries'] = [];
    const preempted: Seq[] = [];

    for (let i = 0; i < this.running.length && budget > 0; i++) {
      const seq = this.running[i]!;
      const newTokens = Math.min(seq.tokens.length - seq.computed, budget);
      if (newTokens <= 0) continue;
      let ok = this.pool.allocate(seq.kv, seq.computed + newTokens);
      while (!ok) {
        const victim = this.running.at(-1)!;
        this.preempt(victim);
        preempted.push(victim);
        if (victim === seq) break;
        ok = this.pool.allocate(seq.kv, seq.computed + newTokens);
      }
      if (!ok) break;
      entries.push({ seq, newTokens });
      budget -= newTokens;
    }

    if (preempted.length === 0) {
      while (this.waiting.length && this.running.length < this.o.maxNumSeqs && budget > 0) {
        const seq = this.waiting[0]!;
        const fresh = seq.kv.blocks.length === 0;
        if (fresh) {
          this.pool.hashBlocks(seq.tokens, seq.kv.hashes);
          seq.computed = this.pool.acquirePrefix(seq.kv, seq.tokens.length);
        }
        const remaining = seq.tokens.length - seq.computed;
        // Without chunking a prompt goes in whole (alone if it exceeds the budget).
        if (!this.chunked && remaining > budget && entries.length > 0) {
          this.unadmit(seq);
          break;
        }
        const newTokens = this.chunked ? Math.min(remaining, budget) : remaining;
        if (!this.pool.allocate(seq.kv, seq.computed + newTokens)) {
          this.unadmit(seq);
          break;
        }
        if (seq.cachedTokens < 0) seq.cachedTokens = seq.computed;
        this.waiting.shift();
        seq.state = 'running';
        this.running.push(seq);
        entries.push({ seq, newTokens });
        budget -= newTokens;
      }
    }

    const shape: StepShape = { prefill: [], decodeSeqs: 0, decodeKvTokens: 0 };
    for (const { seq, newTokens } of entries) {
      const decode = newTokens === 1 && seq.computed === seq.tokens.length - 1 && seq.tokens.length > seq.promptLen;
      if (decode) {
        shape.decodeSeqs++;
        shape.decodeKvTokens += seq.computed + 1;
      } else shape.prefill.push({ newTokens, context: seq.computed + newTokens });
    }
    return { entries, shape, preempted };
  }

  /** Apply a planned step: KV gets computed, finished prefills sample a token. */
  complete(step: PlannedStep): StepResult[] {
    const out: StepResult[] = [];
    for (const { seq, newTokens } of step.entries) {
      if (seq.state !== 'running') continue; // aborted or preempted meanwhile
      seq.computed += newTokens;
      if (seq.computed < seq.tokens.length) {
        this.pool.commit(seq.kv, seq.tokens, seq.computed);
        continue; // prefill chunk, more to come
      }
      const { token, finished } = seq.sample();
      seq.tokens.push(token);
      this.pool.commit(seq.kv, seq.tokens, seq.computed);
      out.push({ seq, token, finished });
      if (finished) this.remove(seq);
    }
    return out;
  }

  private preempt(seq: Seq): void {
    const i = this.running.indexOf(seq);
    if (i >= 0) this.running.splice(i, 1);
    this.pool.release(seq.kv);
    seq.computed = 0;
    seq.state = 'waiting';
    seq.preemptions++;
    this.preemptions++;
    this.waiting.unshift(seq);
  }

  // Give back a prefix taken for a sequence that could not be admitted.
  private unadmit(seq: Seq): void {
    this.pool.release(seq.kv);
    seq.computed = 0;
  }
}
