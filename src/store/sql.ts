// The store's statements, in the SQL both backends speak (placeholders $1..$n; the
// SQLite backend renames them). Every read filters by tenant and by the TTL cutoff, so an
// expired row is gone for clients even before the pruner deletes it.

import { MAX_CHAIN, type Chain, type StorePolicy, type StoredResponse } from './types.js';

export const COLUMNS = 'id, tenant, model, previous_id, stored_at, input, response';

export const INSERT = `INSERT INTO portico_responses (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`;

export const SELECT_ONE = `SELECT ${COLUMNS} FROM portico_responses WHERE id = $1 AND tenant = $2 AND stored_at >= $3`;

export const DELETE_ONE = 'DELETE FROM portico_responses WHERE id = $1 AND tenant = $2 AND stored_at >= $3';

/** The response and its ancestors, newest first (depth 0 is the named one). */
export const SELECT_CHAIN = `
WITH RECURSIVE chain(id, tenant, model, previous_id, stored_at, input, response, depth) AS (
  SELECT ${COLUMNS}, 0 FROM portico_responses WHERE id = $1 AND tenant = $2 AND stored_at >= $3
  UNION ALL
  SELECT r.id, r.tenant, r.model, r.previous_id, r.stored_at, r.input, r.response, c.depth + 1
  FROM portico_responses r JOIN chain c ON r.id = c.previous_id
  WHERE r.tenant = $2 AND r.stored_at >= $3 AND c.depth < ${MAX_CHAIN}
)
SELECT ${COLUMNS} FROM chain ORDER BY depth ASC`;

export const PRUNE_EXPIRED = 'DELETE FROM portico_responses WHERE stored_at < $1';

/** Keeps the newest $1 rows (stored_at is unique per process; see StoreClock). */
export const PRUNE_OVERFLOW = `DELETE FROM portico_responses WHERE stored_at < (SELECT stored_at FROM portico_responses ORDER BY stored_at DESC LIMIT 1 OFFSET $1)`;

export interface Row {
  id: string;
  tenant: string;
  model: string;
  previous_id: string | null;
  stored_at: number | string | bigint;
  input: string;
  response: string;
}

export function params(r: StoredResponse): unknown[] {
  return [r.id, r.tenant, r.model, r.previousId, r.storedAt, JSON.stringify(r.input), JSON.stringify(r.response)];
}

export function fromRow(row: Row): StoredResponse {
  return {
    id: row.id,
    tenant: row.tenant,
    model: row.model,
    previousId: row.previous_id,
    storedAt: Number(row.stored_at),
    input: JSON.parse(row.input) as unknown[],
    response: JSON.parse(row.response) as StoredResponse['response'],
  };
}

/** The chain rows (newest first) as a lookup answer for `model`. */
export function chainOf(rows: Row[], model: string): Chain {
  if (rows.length === 0 || rows[0]!.model !== model) return { kind: 'missing' };
  const oldest = rows[rows.length - 1]!;
  if (oldest.previous_id !== null) return { kind: 'broken', missingId: oldest.previous_id };
  return { kind: 'found', responses: rows.map(fromRow).reverse() };
}

/**
 * Store times that never repeat within a process, so the max-rows pruning (which keeps
 * rows newer than the n-th newest stored_at) keeps exactly n of this process's rows.
 */
export class StoreClock {
  private last = 0;
  constructor(private readonly wall: () => number = Date.now) {}
  now(): number {
    this.last = Math.max(this.wall(), this.last + 1);
    return this.last;
  }
}

/** The oldest stored_at a read still sees (0: no TTL). */
export function ttlCutoff(p: StorePolicy): number {
  return p.ttlMs > 0 ? (p.now ?? Date.now)() - p.ttlMs : 0;
}

/**
 * When to prune: after every put while the policy limits rows to few (exact), else after
 * every 1% of maxRows puts, or a second after the last prune for the TTL (the bound may be
 * overshot by 1% between prunes; reads never see expired rows).
 */
export class PruneSchedule {
  private puts = 0;
  private lastAt = 0;
  constructor(private readonly maxRows: number, private readonly ttlMs: number) {}

  due(now: number): boolean {
    if (this.maxRows === 0 && this.ttlMs === 0) return false;
    this.puts++;
    const every = this.maxRows > 0 ? Math.max(1, Math.floor(this.maxRows / 100)) : Infinity;
    if (this.puts >= every || now - this.lastAt >= 1000) {
      this.puts = 0;
      this.lastAt = now;
      return true;
    }
    return false;
  }
}
