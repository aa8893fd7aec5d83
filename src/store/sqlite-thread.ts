// The SQLite store on its own thread. better-sqlite3 is synchronous, and a durable put on
// a file (WAL, synchronous=FULL) waits for an fsync: measured 3.4-6.9 ms per put on this
// machine (bench/responses-store.bench.ts), time the event loop would serve nothing else.
// Here a worker thread owns the writing connection (put, delete: each a message the event
// loop only awaits), and reads (get, chain) run on the caller's thread over a second
// connection (WAL lets readers run beside the writer; a read is no fsync, and through the
// thread the message copies cost the loop more than the query: measured in the same bench).
// `:memory:` stays wholly on the caller's thread (no fsync, and no second connection sees it).

import { Worker } from 'node:worker_threads';
import { SqliteStore } from './sqlite.js';
import type { Chain, ResponseStore, StorePolicy, StoredResponse } from './types.js';

type Op = 'put' | 'get' | 'chain' | 'delete' | 'close';

interface Reply {
  seq: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

export class SqliteThreadStore implements ResponseStore {
  readonly kind = 'sqlite';
  private readonly worker: Worker;
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private failed: Error | null = null;

  private constructor(worker: Worker, private readonly reader: SqliteStore) {
    this.worker = worker;
    worker.on('message', (r: Reply) => {
      const p = this.pending.get(r.seq);
      if (!p) return;
      this.pending.delete(r.seq);
      if (r.ok) p.resolve(r.value);
      else p.reject(new Error(r.error));
    });
    const fail = (err: Error) => {
      this.failed = err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the responses store thread exited (${code})`)));
  }

  /** Starts the thread; resolves once it has opened (and migrated) the file. */
  static async open(path: string, policy: StorePolicy): Promise<SqliteThreadStore> {
    const worker = new Worker(new URL('./sqlite-worker.js', import.meta.url), { workerData: { path, ttlMs: policy.ttlMs, maxRows: policy.maxRows } });
    await new Promise<void>((resolve, reject) => {
      worker.once('message', (m: { ready?: boolean; error?: string }) => (m.ready ? resolve() : reject(new Error(m.error))));
      worker.once('error', reject);
    });
    // Opened after the thread migrated the file: this connection finds the schema done.
    return new SqliteThreadStore(worker, new SqliteStore(path, policy));
  }

  private call<T>(op: Op, args: unknown[]): Promise<T> {
    if (this.failed) return Promise.reject(this.failed);
    const seq = this.seq++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(seq, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ seq, op, args });
    });
  }

  async put(r: StoredResponse): Promise<void> {
    r.storedAt = await this.call<number>('put', [r]);
  }

  get(tenant: string, id: string): Promise<StoredResponse | null> {
    return this.reader.get(tenant, id);
  }

  chain(tenant: string, model: string, id: string): Promise<Chain> {
    return this.reader.chain(tenant, model, id);
  }

  delete(tenant: string, id: string): Promise<boolean> {
    return this.call('delete', [tenant, id]);
  }

  async close(): Promise<void> {
    await this.reader.close();
    if (this.failed) return;
    await this.call('close', []).catch(() => undefined);
    await this.worker.terminate();
  }
}
