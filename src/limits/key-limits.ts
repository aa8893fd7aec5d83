// Which budget (slot of the BudgetTable) a request draws on, from the API key it sent.
// The process's owner (the main thread) assigns slots when the limits are loaded and
// again on every reload (assignSlots: a key keeps its slot, and so what it spent); every
// thread that serves requests applies the same SlotTable (RateLimits.apply), so a key is
// one Map lookup per request and the same slot in every shard.

import { createHash } from 'node:crypto';
import { BudgetTable, MAX_SLOTS, type SlotLimits } from './budget-table.js';
import { DEFAULT_KEY, type LimitsConfig } from './limits-config.js';

/** Slots and limits as every thread applies them (structured-cloneable: posted to the shards). */
export interface SlotTable {
  windowMs: number;
  /** [API key, slot] of each key with a budget of its own. */
  keys: [string, number][];
  /** The budget shared by requests without a key of their own, or -1 (they are not limited). */
  shared: number;
  /** Per slot: its limits (a slot no longer in use: none). */
  limits: SlotLimits[];
  /** Per slot: its name between replicas (a digest of the key, never the key; '*' for the shared one). */
  ids: string[];
  /** Slots (per key, and the shared one's under SHARED) as assigned so far: a reload keeps them. */
  assigned: [string, number][];
}

const SHARED = '\u0000shared';
const NONE: SlotLimits = { requests: 0, tokens: 0, concurrent: 0 };

/**
 * The slots of `config` for a server whose accepted keys are `apiKeys` (each gets the
 * default's limits unless it has its own), keeping the slots of `prev`.
 */
export function assignSlots(prev: SlotTable | null, config: LimitsConfig, apiKeys: readonly string[]): SlotTable {
  const assigned = new Map(prev?.assigned ?? []);
  let next = 0;
  for (const s of assigned.values()) next = Math.max(next, s + 1);
  const slotOf = (name: string): number => {
    let s = assigned.get(name);
    if (s === undefined) {
      if (next >= MAX_SLOTS) throw new Error(`rate limits: at most ${MAX_SLOTS} keys can have a budget (reloads count every key ever listed)`);
      assigned.set(name, (s = next++));
    }
    return s;
  };
  const byKey = new Map(config.entries.map((e) => [e.key, e]));
  const dflt = byKey.get(DEFAULT_KEY);
  const limits: SlotLimits[] = [];
  const ids: string[] = [];
  const keys: [string, number][] = [];
  const own = (key: string, l: SlotLimits) => {
    const s = slotOf(key);
    if (limits[s] !== undefined) return;
    limits[s] = { requests: l.requests, tokens: l.tokens, concurrent: l.concurrent };
    ids[s] = keyId(key);
    keys.push([key, s]);
  };
  for (const e of config.entries) if (e.key !== DEFAULT_KEY) own(e.key, e);
  if (dflt) for (const k of apiKeys) if (k !== '' && !byKey.has(k)) own(k, dflt);
  let shared = -1;
  if (dflt) {
    shared = slotOf(SHARED);
    limits[shared] = { requests: dflt.requests, tokens: dflt.tokens, concurrent: dflt.concurrent };
    ids[shared] = DEFAULT_KEY;
  }
  for (let s = 0; s < next; s++) {
    limits[s] ??= NONE;
    ids[s] ??= '';
  }
  return { windowMs: config.windowMs, keys, shared, limits, ids, assigned: [...assigned] };
}

/** A key's name between replicas: a digest, so the key itself never leaves the process. */
export function keyId(key: string): string {
  return createHash('sha256').update('portico-rate-limit\u0000').update(key).digest('base64url').slice(0, 22);
}

/** One thread's view: key to slot, and the shared budget table. */
export class RateLimits {
  private bySlotKey = new Map<string, number>();
  private shared = -1;
  /** Any limit at all: when false a request does nothing more than test this. */
  active = false;
  table: SlotTable | null = null;

  constructor(readonly budgets: BudgetTable) {}

  /** Apply a SlotTable (at start and on every reload). */
  apply(t: SlotTable): void {
    this.budgets.setLimits(t.limits, t.windowMs);
    this.bySlotKey = new Map(t.keys);
    this.shared = t.shared;
    this.table = t;
    this.active = t.keys.length > 0 || t.shared >= 0;
  }

  /** The slot `key` draws on ('' for none sent), or -1: not limited. */
  slotFor(key: string): number {
    if (key !== '') {
      const s = this.bySlotKey.get(key);
      if (s !== undefined) return s;
    }
    return this.shared;
  }
}

/** Bring the budgets in line with a new table (once per process, before the threads apply it). */
export function rebaseSlots(budgets: BudgetTable, prev: SlotTable | null, next: SlotTable): void {
  for (let s = 0; s < next.limits.length; s++) {
    const after = next.limits[s]!;
    const before = prev?.limits[s];
    if (before && before.requests === after.requests && before.tokens === after.tokens) continue;
    budgets.rebase(s, before, after);
  }
}
