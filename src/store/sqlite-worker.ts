// The thread of SqliteThreadStore: owns the better-sqlite3 connection and answers one
// message per store call, in order.

import { parentPort, workerData } from 'node:worker_threads';
import { SqliteStore } from './sqlite.js';
import type { StoredResponse } from './types.js';

const { path, ttlMs, maxRows } = workerData as { path: string; ttlMs: number; maxRows: number };
const port = parentPort!;
let store: SqliteStore;
try {
  store = new SqliteStore(path, { ttlMs, maxRows });
  port.postMessage({ ready: true });
} catch (err) {
  port.postMessage({ ready: false, error: err instanceof Error ? err.message : String(err) });
  process.exit(1);
}

port.on('message', async (m: { seq: number; op: string; args: unknown[] }) => {
  try {
    let value: unknown;
    if (m.op === 'put') {
      const r = m.args[0] as StoredResponse;
      await store.put(r);
      value = r.storedAt;
    } else if (m.op === 'get') value = await store.get(m.args[0] as string, m.args[1] as string);
    else if (m.op === 'chain') value = await store.chain(m.args[0] as string, m.args[1] as string, m.args[2] as string);
    else if (m.op === 'delete') value = await store.delete(m.args[0] as string, m.args[1] as string);
    else if (m.op === 'close') value = await store.close();
    port.postMessage({ seq: m.seq, ok: true, value });
  } catch (err) {
    port.postMessage({ seq: m.seq, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
});
