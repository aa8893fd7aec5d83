// The embedded store: one SQLite file (npm better-sqlite3), or `:memory:` for tests.
// WAL journal with synchronous=FULL: a put returns after its commit is synced to disk, so
// a stored response survives a crash or power loss once the client has it. Several
// processes (or shard threads) may share one file; busy_timeout makes a writer wait for
// another's lock instead of failing.
//
// better-sqlite3 is synchronous (its design: it beats the async node-sqlite3 on every
// workload it measures): this class runs on the thread that calls it. `serve` runs it on
// a store thread for a file (sqlite-thread.ts), since a durable put waits for an fsync.

import Database from 'better-sqlite3';
import { MIGRATIONS } from './migrations/index.js';
import { INSERT, SELECT_ONE, DELETE_ONE, SELECT_CHAIN, PRUNE_EXPIRED, PRUNE_OVERFLOW, params, fromRow, chainOf, StoreClock, PruneSchedule, ttlCutoff, type Row } from './sql.js';
import type { Chain, ResponseStore, StorePolicy, StoredResponse } from './types.js';

/** $1..$n as SQLite's named parameters @p1..@pn (better-sqlite3 binds those from an object). */
function named(sql: string): string {
  return sql.replace(/\$(\d+)/g, '@p$1');
}

function bind(values: unknown[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  values.forEach((v, i) => (o[`p${i + 1}`] = v));
  return o;
}

export function migrateSqlite(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS portico_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
  // IMMEDIATE: two processes opening one new file do not both apply a migration.
  const apply = db.transaction(() => {
    const done = new Set((db.prepare('SELECT version FROM portico_schema_migrations').all() as { version: number }[]).map((r) => r.version));
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      db.exec(m.sqlite);
      db.prepare('INSERT INTO portico_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
    }
  });
  apply.immediate();
}

export class SqliteStore implements ResponseStore {
  readonly kind = 'sqlite';
  private readonly db: Database.Database;
  private readonly clock: StoreClock;
  private readonly schedule: PruneSchedule;
  private readonly stmt;

  constructor(path: string, private readonly policy: StorePolicy) {
    this.db = new Database(path);
    this.db.pragma('busy_timeout = 10000');
    if (path !== ':memory:') this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    migrateSqlite(this.db);
    this.schedule = new PruneSchedule(policy.maxRows, policy.ttlMs);
    this.clock = new StoreClock(policy.now);
    this.stmt = {
      insert: this.db.prepare(named(INSERT)),
      one: this.db.prepare(named(SELECT_ONE)),
      del: this.db.prepare(named(DELETE_ONE)),
      chain: this.db.prepare(named(SELECT_CHAIN)),
      expired: this.db.prepare(named(PRUNE_EXPIRED)),
      overflow: this.db.prepare(named(PRUNE_OVERFLOW)),
    };
  }

  private cutoff(): number {
    return ttlCutoff(this.policy);
  }

  async put(r: StoredResponse): Promise<void> {
    r.storedAt = this.clock.now();
    this.stmt.insert.run(bind(params(r)));
    if (this.schedule.due(r.storedAt)) this.prune();
  }

  private prune(): void {
    if (this.policy.ttlMs > 0) this.stmt.expired.run(bind([this.cutoff()]));
    if (this.policy.maxRows > 0) this.stmt.overflow.run(bind([this.policy.maxRows - 1]));
  }

  async get(tenant: string, id: string): Promise<StoredResponse | null> {
    const row = this.stmt.one.get(bind([id, tenant, this.cutoff()])) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  async chain(tenant: string, model: string, id: string): Promise<Chain> {
    return chainOf(this.stmt.chain.all(bind([id, tenant, this.cutoff()])) as Row[], model);
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    return this.stmt.del.run(bind([id, tenant, this.cutoff()])).changes > 0;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
