// A worker's registration: its record under a key held by a lease that this process
// keeps alive. When etcd loses the lease (etcd was away longer than the TTL, or the
// lease was revoked), a new lease and key are made, retried with backoff until etcd
// answers. close() revokes the lease, so frontends drop the worker at once instead of
// after the TTL.

import type { Etcd3, Lease } from 'etcd3';
import { log } from '../log.js';
import { etcdClient, within } from './etcd-client.js';
import { workerKey, type WorkerRecord } from './record.js';

export interface RegistrationOptions {
  endpoints: string[];
  namespace: string;
  record: WorkerRecord;
  /** Lease TTL in seconds (default 10). */
  ttlSecs?: number;
}

export class WorkerRegistration {
  private readonly client: Etcd3;
  private lease: Lease | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  /** The current key (changes when the lease is re-made). */
  key = '';
  /** Leases granted (the first included). */
  grants = 0;

  constructor(private readonly o: RegistrationOptions) {
    this.client = etcdClient(o.endpoints);
  }

  /** Register; rejects with a clear error when etcd cannot be reached. */
  async start(): Promise<void> {
    try {
      await within(this.register(), 5000, 'etcd registration');
    } catch (err) {
      this.client.close();
      throw new Error(`cannot register with etcd at ${this.o.endpoints.join(', ')}: ${(err as Error).message}`);
    }
  }

  private async register(): Promise<void> {
    const lease = this.client.lease(this.o.ttlSecs ?? 10);
    this.lease = lease;
    lease.on('lost', (err) => {
      if (this.closed || lease !== this.lease) return;
      log.warn('etcd lease lost; registering again', { error: String(err) });
      this.again(200);
    });
    let id: string;
    try {
      id = await lease.grant();
      const key = workerKey(this.o.namespace, BigInt(id).toString(16));
      await lease.put(key).value(JSON.stringify(this.o.record));
      if (lease !== this.lease || this.closed) {
        // A late answer to an attempt already given up on: undo it.
        await lease.revoke().catch(() => {});
        return;
      }
      this.key = key;
    } catch (err) {
      lease.release();
      if (lease === this.lease) this.lease = null;
      throw err;
    }
    this.grants++;
    log.info('registered in etcd', { key: this.key, model: this.o.record.model, url: this.o.record.url });
  }

  private again(delayMs: number): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (this.closed) return;
      within(this.register(), 5000, 'etcd registration').catch(() => this.again(Math.min(delayMs * 2, 2000)));
    }, delayMs);
  }

  /** Deregister (revoke the lease, bounded) and close the client. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const lease = this.lease;
    this.lease = null;
    if (lease) await within(lease.revoke(), 3000, 'etcd revoke').catch((err) => log.warn('could not revoke the etcd lease; it expires after its TTL', { error: String(err) }));
    this.client.close();
  }
}
