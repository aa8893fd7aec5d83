// The frontend's view of the workers registered in etcd: one initial listing of the
// namespace's worker prefix, then a watch from the revision after it. Each key is
// applied at most once per revision (a key's mod_revision orders puts, deletes and
// re-listings), so the re-listing done after every reconnect can neither resurrect a
// worker deleted meanwhile nor miss one that joined or left while etcd was away.
// While etcd is unreachable the last known workers stay; the watch retries with
// backoff (etcd-client.ts) and the status (status.ts) says so on /health and /metrics.

import type { Etcd3, Watcher } from 'etcd3';
import { log } from '../log.js';
import { etcdClient, within } from './etcd-client.js';
import { parseRecord, workersPrefix, type WorkerRecord } from './record.js';
import type { DiscoveryStatus } from './status.js';

export interface WorkerChange {
  type: 'put' | 'delete';
  key: string;
  /** The record (put), or the last one known for the key (delete). */
  record: WorkerRecord;
}

export interface WatcherOptions {
  endpoints: string[];
  namespace: string;
  status: DiscoveryStatus;
  /** Called in order, one change at a time (the next waits for the previous one's promise). */
  onChange: (c: WorkerChange) => Promise<void> | void;
  /** How long the first listing may take before startup fails (default 5 s). */
  connectTimeoutMs?: number;
}

interface Known {
  rev: bigint;
  record: WorkerRecord | null;
}

interface Kv {
  key: Buffer;
  value: Buffer;
  mod_revision: string;
}

export class EtcdWorkerWatcher {
  private readonly client: Etcd3;
  private readonly prefix: string;
  private readonly known = new Map<string, Known>();
  private watcher: Watcher | null = null;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private lost = false;
  private resyncTimer: NodeJS.Timeout | null = null;

  constructor(private readonly o: WatcherOptions) {
    this.client = etcdClient(o.endpoints);
    this.prefix = workersPrefix(o.namespace);
  }

  /** List the workers and start watching; rejects with a clear error when etcd cannot be reached. */
  async start(): Promise<void> {
    const ms = this.o.connectTimeoutMs ?? 5000;
    let rev: bigint;
    try {
      rev = await within(this.list(), ms, 'etcd listing');
    } catch (err) {
      this.client.close();
      throw new Error(`cannot reach etcd at ${this.o.endpoints.join(', ')} (--discovery): ${(err as Error).message}`);
    }
    this.o.status.setConnected(true);
    const w = await this.client.watch().prefix(this.prefix).startRevision(String(rev + 1n)).create();
    this.watcher = w;
    w.on('put', (kv) => this.enqueue(() => this.apply(kv as unknown as Kv, 'put')));
    w.on('delete', (kv) => this.enqueue(() => this.apply(kv as unknown as Kv, 'delete')));
    w.on('disconnected', (err) => {
      if (this.closed) return;
      if (!this.lost) log.warn('etcd lost: keeping the last known workers, reconnecting', { error: String(err) });
      this.lost = true;
      this.o.status.setConnected(false);
    });
    w.on('connected', () => {
      if (this.closed || !this.lost) return;
      this.resync(100);
    });
    w.on('error', (err) => log.warn('etcd watch error', { error: String(err) }));
    await this.chain;
  }

  /** Re-list after a reconnect (retried with backoff until it succeeds). */
  private resync(delayMs: number): void {
    if (this.resyncTimer || this.closed) return;
    this.resyncTimer = setTimeout(() => {
      this.resyncTimer = null;
      within(this.list(), 5000, 'etcd listing')
        .then(() => {
          if (this.closed) return;
          this.lost = false;
          this.o.status.setConnected(true);
          this.o.status.countReconnect();
          log.info('etcd reconnected; workers re-listed', { workers: this.o.status.view().workers });
        })
        .catch(() => this.resync(Math.min(delayMs * 2, 2000)));
    }, delayMs);
  }

  /** One listing, applied against what is known; returns the listing's revision. */
  private async list(): Promise<bigint> {
    const res = await this.client.getAll().prefix(this.prefix).exec();
    const rev = BigInt(res.header.revision);
    const seen = new Set<string>();
    for (const kv of res.kvs as unknown as Kv[]) {
      seen.add(kv.key.toString());
      this.enqueue(() => this.apply(kv, 'put'));
    }
    // Keys gone since: deleted at some revision up to `rev`.
    for (const [key, k] of this.known) {
      if (k.record && !seen.has(key)) this.enqueue(() => this.delete(key, rev));
    }
    await this.chain;
    return rev;
  }

  private enqueue(f: () => Promise<void> | void): void {
    this.chain = this.chain.then(f).catch((err) => log.error('discovery change failed', { error: String(err) }));
  }

  private async apply(kv: Kv, type: 'put' | 'delete'): Promise<void> {
    const key = kv.key.toString();
    const rev = BigInt(kv.mod_revision);
    if (type === 'delete') return this.delete(key, rev);
    const k = this.known.get(key);
    if (k && k.rev >= rev) return;
    const parsed = parseRecord(kv.value.toString());
    if (typeof parsed === 'string') {
      this.o.status.countInvalid();
      log.warn('discovery key is not a worker record; ignored', { key, why: parsed });
      this.known.set(key, { rev, record: k?.record ?? null });
      return;
    }
    if (k?.record && k.record.url === parsed.url && k.record.model === parsed.model) {
      this.known.set(key, { rev, record: parsed });
      return;
    }
    if (k?.record) await this.o.onChange({ type: 'delete', key, record: k.record });
    this.known.set(key, { rev, record: parsed });
    this.updateCount();
    await this.o.onChange({ type: 'put', key, record: parsed });
  }

  private async delete(key: string, rev: bigint): Promise<void> {
    const k = this.known.get(key);
    if (k && k.rev >= rev) return;
    this.known.set(key, { rev, record: null });
    this.updateCount();
    if (k?.record) await this.o.onChange({ type: 'delete', key, record: k.record });
  }

  private updateCount(): void {
    let n = 0;
    for (const k of this.known.values()) if (k.record) n++;
    this.o.status.setKnown(n);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    await this.watcher?.cancel().catch(() => {});
    this.client.close();
  }
}
