// --responses-store URL as a store: sqlite:PATH (a file, relative to the working
// directory), sqlite::memory: (this process only), postgres://… or postgresql://…, or
// off (nothing is stored; previous_response_id and the retrieve routes answer 400 / 404).

import { resolve } from 'node:path';
import { SqliteStore } from './sqlite.js';
import { SqliteThreadStore } from './sqlite-thread.js';
import { PostgresStore } from './postgres.js';
import type { ResponseStore, StorePolicy } from './types.js';

export const DEFAULT_STORE_URL = 'sqlite:portico-responses.db';

/** A bad --responses-store value (a startup error naming the flag). */
export class StoreUrlError extends Error {}

/** What the URL names, checked without opening anything (the CLI's check). */
export function parseStoreUrl(url: string): { kind: 'off' } | { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string } {
  if (url === 'off') return { kind: 'off' };
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '') throw new StoreUrlError('--responses-store sqlite: needs a path (sqlite:PATH or sqlite::memory:)');
    return { kind: 'sqlite', path: path === ':memory:' ? ':memory:' : resolve(path) };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { kind: 'postgres', url };
  throw new StoreUrlError(`--responses-store must be sqlite:PATH, sqlite::memory:, postgres://... or off; got ${JSON.stringify(url)}`);
}

/** Opens the store (migrating it); null for off. */
export async function openStore(url: string, policy: StorePolicy): Promise<ResponseStore | null> {
  const u = parseStoreUrl(url);
  if (u.kind === 'off') return null;
  // A file's durable put waits for an fsync: on its own thread (sqlite-thread.ts).
  if (u.kind === 'sqlite') return u.path === ':memory:' ? new SqliteStore(u.path, policy) : SqliteThreadStore.open(u.path, policy);
  return PostgresStore.open(u.url, policy);
}
