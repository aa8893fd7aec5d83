// Per-key rate limits for a process: the owner (the main thread) holds the budget table's
// buffer and assigns the slots when the limits are loaded and on every reload; each thread
// that serves requests applies the resulting SlotTable to its own view of the same buffer
// (src/limits/key-limits.ts). A reload keeps every key's slot, and so what it has spent.

import { BudgetTable } from '../limits/budget-table.js';
import { assignSlots, rebaseSlots, RateLimits, type SlotTable } from '../limits/key-limits.js';
import type { LimitsConfig } from '../limits/limits-config.js';

/** What a frontend thread is given: the shared buffer and the table to apply. */
export interface RateLimitShare {
  buffer: SharedArrayBuffer;
  table: SlotTable;
}

export class RateLimitOwner {
  readonly budgets = new BudgetTable();
  private table: SlotTable | null = null;

  constructor(private readonly apiKeys: readonly string[]) {}

  /** The table of `config` (throws on too many keys, keeping the one in force). */
  load(config: LimitsConfig): RateLimitShare {
    const next = assignSlots(this.table, config, this.apiKeys);
    rebaseSlots(this.budgets, this.table, next);
    this.table = next;
    return { buffer: this.budgets.buffer, table: next };
  }
}

/** A frontend thread's view of the process's budgets. */
export function threadLimits(share: RateLimitShare | undefined): RateLimits {
  const limits = new RateLimits(new BudgetTable(share?.buffer ?? new SharedArrayBuffer(0)));
  if (share) limits.apply(share.table);
  return limits;
}

/** A short account of a table for the log (never the keys). */
export function describeTable(t: SlotTable): Record<string, unknown> {
  return { keys: t.keys.length, default: t.shared >= 0, window_secs: t.windowMs / 1000 };
}
