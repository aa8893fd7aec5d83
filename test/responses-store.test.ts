// The SQLite store on its own: tenancy, the chain walk (per model, broken by a deleted
// ancestor), the TTL (with a moved clock) and the max-rows bound, and the migrations
// applied once (a second open of the same file finds them done).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../src/store/sqlite.js';
import type { StoredResponse } from '../src/store/types.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';

function row(id: string, previousId: string | null = null, over: Partial<StoredResponse> = {}): StoredResponse {
  return { id, tenant: 't1', model: 'm', previousId, storedAt: 0, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: id }] }], response: { id, output: [{ type: 'message', content: [] }] }, ...over };
}

test('a tenant reads, chains and deletes only its own responses', async () => {
  const s = new SqliteStore(':memory:', { ttlMs: 0, maxRows: 0 });
  await s.put(row('a'));
  await s.put(row('b', 'a'));
  assert.equal((await s.get('t1', 'a'))?.id, 'a');
  assert.equal(await s.get('t2', 'a'), null);
  assert.deepEqual(await s.chain('t2', 'm', 'b'), { kind: 'missing' });
  assert.equal(await s.delete('t2', 'a'), false);
  const c = await s.chain('t1', 'm', 'b');
  assert.equal(c.kind, 'found');
  assert.deepEqual(c.kind === 'found' && c.responses.map((r) => r.id), ['a', 'b']);
  // Another model's store does not hold it.
  assert.deepEqual(await s.chain('t1', 'other', 'b'), { kind: 'missing' });
  assert.equal(await s.delete('t1', 'a'), true);
  assert.deepEqual(await s.chain('t1', 'm', 'b'), { kind: 'broken', missingId: 'a' });
  await s.close();
});

test('the TTL hides a response once it is older, and the pruner deletes its row', async () => {
  let now = 1_000_000;
  const s = new SqliteStore(':memory:', { ttlMs: 60_000, maxRows: 0, now: () => now });
  await s.put(row('old'));
  now += 30_000;
  await s.put(row('new', 'old'));
  assert.ok(await s.get('t1', 'old'));
  now += 40_000; // old is 70 s old, new 40 s
  assert.equal(await s.get('t1', 'old'), null);
  assert.ok(await s.get('t1', 'new'));
  assert.equal((await s.chain('t1', 'm', 'new')).kind, 'broken');
  now += 2_000;
  await s.put(row('third')); // a put more than a second after the last prune prunes
  assert.equal(await s.delete('t1', 'old'), false);
  await s.close();
});

test('max rows keeps the newest rows, all tenants together', async () => {
  const s = new SqliteStore(':memory:', { ttlMs: 0, maxRows: 2 });
  await s.put(row('r1'));
  await s.put(row('r2', null, { tenant: 't2' }));
  await s.put(row('r3'));
  assert.equal(await s.get('t1', 'r1'), null);
  assert.ok(await s.get('t2', 'r2'));
  assert.ok(await s.get('t1', 'r3'));
  await s.close();
});

test('migrations are recorded and applied once per file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-store-'));
  try {
    const file = join(dir, 'r.db');
    const a = new SqliteStore(file, { ttlMs: 0, maxRows: 0 });
    await a.put(row('kept'));
    await a.close();
    const b = new SqliteStore(file, { ttlMs: 0, maxRows: 0 });
    assert.equal((await b.get('t1', 'kept'))?.id, 'kept');
    await b.close();
    const db = new Database(file, { readonly: true });
    const versions = db.prepare('SELECT version FROM portico_schema_migrations ORDER BY version').all() as { version: number }[];
    assert.deepEqual(versions.map((v) => v.version), MIGRATIONS.map((m) => m.version));
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
