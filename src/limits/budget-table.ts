// Every API key's rate-limit budget in one SharedArrayBuffer, so that the shards of a
// process (threads that each hold a view of the same buffer) draw on one budget per key.
// A key is a slot, an index resolved once when the limits are loaded (./key-limits.ts);
// a request does constant work on its slot and touches no other.
//
// Per slot: two token buckets (requests and tokens), each a level and the time it was
// last brought up to date, refilled continuously at capacity / window (a request
// admitted at the start of a window is back after one window, as OpenAI's "per minute"
// limits are); the generations in flight here and, as last heard, on other replicas;
// and what this process spent since it last told the other replicas (./limit-sync.ts in
// src/events). The bucket fields change together under a per-slot spin lock (an
// Atomics.compareExchange on an Int32; its critical section is a few float operations,
// never a call out), the counters with single atomic operations.
//
// The limits themselves (capacities, window) are not in the buffer: each thread holds
// them (SlotLimits), loaded from the same configuration.

/** Int32 fields of a slot. */
const LOCK = 0;
const INFLIGHT = 1;
const REMOTE_INFLIGHT = 2;
const UNSENT_REQUESTS = 3;
const UNSENT_TOKENS = 4;
/** Float64 fields of a slot (in Float64 units from the slot's start). */
const REQ_LEVEL = 4;
const REQ_AT = 5;
const TOK_LEVEL = 6;
const TOK_AT = 7;

const SLOT_BYTES = 64;
const I32_PER_SLOT = SLOT_BYTES / 4;
const F64_PER_SLOT = SLOT_BYTES / 8;

/** The most keys (with their own limits or the default's) one configuration may name. */
export const MAX_SLOTS = 4096;

/** What a slot may spend: 0 means no limit of that kind. */
export interface SlotLimits {
  requests: number;
  tokens: number;
  concurrent: number;
}

/** A bucket as a client is told about it (limit 0: no such limit). */
export interface BucketState {
  limit: number;
  /** Whole units left now (never below 0). */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

/** Why a request was refused, and when to come back. */
export type Refusal = 'requests' | 'tokens' | 'concurrent' | 'too_large';

export interface Admission {
  /** null: admitted. */
  refused: Refusal | null;
  /** Refused: milliseconds until the refused resource has room for this request (0: unknown). */
  retryAfterMs: number;
  /** The buckets after the decision (limit 0: the slot has no such limit). */
  readonly requests: BucketState;
  readonly tokens: BucketState;
}

export class BudgetTable {
  readonly buffer: SharedArrayBuffer;
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  /** Per slot, this thread's copy of its limits. */
  private limits: SlotLimits[] = [];
  private windowMs = 60_000;

  constructor(
    buffer?: SharedArrayBuffer,
    /** Milliseconds, the same clock in every thread (Date.now; a test injects its own). */
    private readonly now: () => number = Date.now,
  ) {
    this.buffer = buffer ?? new SharedArrayBuffer(MAX_SLOTS * SLOT_BYTES);
    this.i32 = new Int32Array(this.buffer);
    this.f64 = new Float64Array(this.buffer);
  }

  /** This thread's limits: `limits[slot]` per slot, every bucket refilled over `windowMs`. */
  setLimits(limits: SlotLimits[], windowMs: number): void {
    if (limits.length > MAX_SLOTS) throw new Error(`at most ${MAX_SLOTS} keys can have rate limits, got ${limits.length}`);
    this.limits = limits;
    this.windowMs = windowMs;
  }

  limitsOf(slot: number): SlotLimits | undefined {
    return this.limits[slot];
  }

  /**
   * Done once per process when limits are (re)loaded, before any thread uses them: a new
   * slot starts full; a slot whose capacity changed keeps what it already spent (used 2 of
   * 2, raised to 5: 3 left), so a reload neither forgives nor forfeits what was spent.
   */
  rebase(slot: number, before: SlotLimits | undefined, after: SlotLimits): void {
    this.lock(slot);
    const f = slot * F64_PER_SLOT;
    const t = this.now();
    this.f64[f + REQ_LEVEL] = before ? this.level(f + REQ_LEVEL, before.requests, t) + after.requests - before.requests : after.requests;
    this.f64[f + REQ_AT] = t;
    this.f64[f + TOK_LEVEL] = before ? this.level(f + TOK_LEVEL, before.tokens, t) + after.tokens - before.tokens : after.tokens;
    this.f64[f + TOK_AT] = t;
    this.unlock(slot);
  }

  /**
   * Admit one generation of `promptTokens` for `slot`: a place among its concurrent
   * requests, one request and the prompt's tokens. All or nothing: a refusal takes nothing.
   * The tokens limit admits a request while its prompt fits in what is left (output tokens
   * are charged as they are generated, and may take the level below zero).
   */
  admit(slot: number, promptTokens: number, out: Admission): Admission {
    const lim = this.limits[slot]!;
    const i = slot * I32_PER_SLOT;
    out.refused = null;
    out.retryAfterMs = 0;
    if (lim.tokens > 0 && promptTokens > lim.tokens) {
      out.refused = 'too_large';
      this.state(slot, out);
      return out;
    }
    // Counted whatever the limit, so that a reload that sets or lifts one finds the true count.
    const held = Atomics.add(this.i32, i + INFLIGHT, 1);
    if (lim.concurrent > 0 && held + Atomics.load(this.i32, i + REMOTE_INFLIGHT) >= lim.concurrent) {
      Atomics.sub(this.i32, i + INFLIGHT, 1);
      out.refused = 'concurrent';
      this.state(slot, out);
      return out;
    }
    const f = slot * F64_PER_SLOT;
    const rate = 1 / this.windowMs;
    this.lock(slot);
    const t = this.now();
    const req = lim.requests > 0 ? this.level(f + REQ_LEVEL, lim.requests, t) : 0;
    const tok = lim.tokens > 0 ? this.level(f + TOK_LEVEL, lim.tokens, t) : 0;
    if (lim.requests > 0 && req < 1) {
      out.refused = 'requests';
      out.retryAfterMs = (1 - req) / (lim.requests * rate);
    } else if (lim.tokens > 0 && tok < promptTokens) {
      out.refused = 'tokens';
      out.retryAfterMs = (promptTokens - tok) / (lim.tokens * rate);
    } else {
      if (lim.requests > 0) this.f64[f + REQ_LEVEL] = req - 1;
      if (lim.tokens > 0) this.f64[f + TOK_LEVEL] = tok - promptTokens;
    }
    const reqAfter = this.f64[f + REQ_LEVEL]!;
    const tokAfter = this.f64[f + TOK_LEVEL]!;
    this.unlock(slot);
    if (out.refused !== null) {
      Atomics.sub(this.i32, i + INFLIGHT, 1);
    } else {
      Atomics.add(this.i32, i + UNSENT_REQUESTS, 1);
      if (promptTokens > 0) Atomics.add(this.i32, i + UNSENT_TOKENS, promptTokens);
    }
    bucket(out.requests, lim.requests, reqAfter, this.windowMs);
    bucket(out.tokens, lim.tokens, tokAfter, this.windowMs);
    return out;
  }

  /** Tokens generated for `slot` (they count whether or not its limit has room). */
  charge(slot: number, tokens: number): void {
    if (tokens <= 0) return;
    Atomics.add(this.i32, slot * I32_PER_SLOT + UNSENT_TOKENS, tokens);
    const lim = this.limits[slot];
    if (!lim || lim.tokens === 0) return;
    this.spend(slot, 0, tokens);
  }

  /** A generation admitted by admit() is over (whatever the slot's limits are by now). */
  release(slot: number): void {
    Atomics.sub(this.i32, slot * I32_PER_SLOT + INFLIGHT, 1);
  }

  /** What other replicas spent from `slot` (their deltas, ./limit-sync.ts in src/events). */
  spendRemote(slot: number, requests: number, tokens: number): void {
    this.spend(slot, requests, tokens);
  }

  /** Generations in flight on other replicas for `slot`, as last heard. */
  setRemoteInflight(slot: number, n: number): void {
    Atomics.store(this.i32, slot * I32_PER_SLOT + REMOTE_INFLIGHT, n);
  }

  inflight(slot: number): number {
    return Atomics.load(this.i32, slot * I32_PER_SLOT + INFLIGHT);
  }

  /** What this process spent from `slot` since the last call: [requests, tokens]. */
  takeUnsent(slot: number): [number, number] {
    const i = slot * I32_PER_SLOT;
    return [Atomics.exchange(this.i32, i + UNSENT_REQUESTS, 0), Atomics.exchange(this.i32, i + UNSENT_TOKENS, 0)];
  }

  /** The buckets of `slot` now (for the response headers). */
  state(slot: number, out: Admission): void {
    const lim = this.limits[slot]!;
    const f = slot * F64_PER_SLOT;
    this.lock(slot);
    const t = this.now();
    const req = lim.requests > 0 ? this.level(f + REQ_LEVEL, lim.requests, t) : 0;
    const tok = lim.tokens > 0 ? this.level(f + TOK_LEVEL, lim.tokens, t) : 0;
    this.unlock(slot);
    bucket(out.requests, lim.requests, req, this.windowMs);
    bucket(out.tokens, lim.tokens, tok, this.windowMs);
  }

  private spend(slot: number, requests: number, tokens: number): void {
    const lim = this.limits[slot];
    if (!lim) return;
    const f = slot * F64_PER_SLOT;
    this.lock(slot);
    const t = this.now();
    if (requests !== 0 && lim.requests > 0) this.f64[f + REQ_LEVEL] = this.level(f + REQ_LEVEL, lim.requests, t) - requests;
    if (tokens !== 0 && lim.tokens > 0) this.f64[f + TOK_LEVEL] = this.level(f + TOK_LEVEL, lim.tokens, t) - tokens;
    this.unlock(slot);
  }

  /** The bucket at `field` refilled up to time `t` (and stamped with it); under the lock. */
  private level(field: number, capacity: number, t: number): number {
    const at = this.f64[field + 1]!;
    let level = this.f64[field]!;
    if (at === 0) {
      // Never used: full.
      this.f64[field] = capacity;
      this.f64[field + 1] = t;
      return capacity;
    }
    // A clock that stepped back refills nothing.
    if (t > at) {
      level = Math.min(capacity, level + ((t - at) * capacity) / this.windowMs);
      this.f64[field] = level;
      this.f64[field + 1] = t;
    }
    return level;
  }

  private lock(slot: number): void {
    const i = slot * I32_PER_SLOT + LOCK;
    while (Atomics.compareExchange(this.i32, i, 0, 1) !== 0);
  }

  private unlock(slot: number): void {
    Atomics.store(this.i32, slot * I32_PER_SLOT + LOCK, 0);
  }
}

function bucket(out: BucketState, limit: number, level: number, windowMs: number): void {
  out.limit = limit;
  out.remaining = limit === 0 ? 0 : Math.max(0, Math.floor(level));
  out.resetMs = limit === 0 || level >= limit ? 0 : ((limit - level) * windowMs) / limit;
}

export function newAdmission(): Admission {
  return { refused: null, retryAfterMs: 0, requests: { limit: 0, remaining: 0, resetMs: 0 }, tokens: { limit: 0, remaining: 0, resetMs: 0 } };
}
