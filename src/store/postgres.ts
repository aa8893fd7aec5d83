// The shared store: PostgreSQL (npm pg), for several frontends serving one set of
// responses. A put resolves after its COMMIT, which PostgreSQL makes durable
// (synchronous_commit on, its default). Migrations run under an advisory lock, so replicas
// starting together apply each one once.

import pg from 'pg';
import { MIGRATIONS } from './migrations/index.js';
import { INSERT, SELECT_ONE, DELETE_ONE, SELECT_CHAIN, PRUNE_EXPIRED, PRUNE_OVERFLOW, params, fromRow, chainOf, StoreClock, PruneSchedule, ttlCutoff, type Row } from './sql.js';
import type { Chain, ResponseStore, StorePolicy, StoredResponse } from './types.js';
import { log } from '../log.js';

/** pg_advisory_xact_lock key of the migration step ("portico" in ASCII, as a number). */
const MIGRATION_LOCK = 0x706f727469636f;

export async function migratePostgres(pool: pg.Pool): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await c.query('CREATE TABLE IF NOT EXISTS portico_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
    const done = new Set((await c.query<{ version: number }>('SELECT version FROM portico_schema_migrations')).rows.map((r) => r.version));
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await c.query(m.postgres);
      await c.query('INSERT INTO portico_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, Date.now()]);
    }
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

export class PostgresStore implements ResponseStore {
  readonly kind = 'postgres';
  private readonly clock: StoreClock;
  private readonly schedule: PruneSchedule;

  private constructor(private readonly pool: pg.Pool, private readonly policy: StorePolicy) {
    this.schedule = new PruneSchedule(policy.maxRows, policy.ttlMs);
    this.clock = new StoreClock(policy.now);
  }

  /** Connects, checks the server answers and applies pending migrations. */
  static async open(url: string, policy: StorePolicy): Promise<PostgresStore> {
    const pool = new pg.Pool({ connectionString: url, max: 8 });
    // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
    pool.on('error', (err) => log.warn('responses store: idle postgres connection failed', { error: err.message }));
    try {
      await migratePostgres(pool);
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    return new PostgresStore(pool, policy);
  }

  private cutoff(): number {
    return ttlCutoff(this.policy);
  }

  async put(r: StoredResponse): Promise<void> {
    r.storedAt = this.clock.now();
    await this.pool.query(INSERT, params(r));
    if (this.schedule.due(r.storedAt)) await this.prune();
  }

  private async prune(): Promise<void> {
    if (this.policy.ttlMs > 0) await this.pool.query(PRUNE_EXPIRED, [this.cutoff()]);
    if (this.policy.maxRows > 0) await this.pool.query(PRUNE_OVERFLOW, [this.policy.maxRows - 1]);
  }

  async get(tenant: string, id: string): Promise<StoredResponse | null> {
    const r = await this.pool.query<Row>(SELECT_ONE, [id, tenant, this.cutoff()]);
    return r.rows.length > 0 ? fromRow(r.rows[0]!) : null;
  }

  async chain(tenant: string, model: string, id: string): Promise<Chain> {
    return chainOf((await this.pool.query<Row>(SELECT_CHAIN, [id, tenant, this.cutoff()])).rows, model);
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    return ((await this.pool.query(DELETE_ONE, [id, tenant, this.cutoff()])).rowCount ?? 0) > 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
