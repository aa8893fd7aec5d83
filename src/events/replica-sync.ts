// Router replica sync: frontend replicas serving one model share their view of each
// worker's load over the event plane, so two replicas behind a load balancer do not
// both pile onto the worker that looks idle to each of them.
//
// Load travels as snapshots, not deltas: every replica publishes what it has in flight
// per worker (requests, prefill tokens, decode blocks; the load table's local part)
// whenever it changes (checked every `intervalMs`) and at least every `heartbeatMs`.
// A receiver adds the difference from that replica's previous snapshot into its
// overlay (load-table.ts), so a lost, repeated or reordered message (a NATS reconnect)
// can neither leak nor double-count load: the next snapshot corrects it. A replica
// not heard from for `expiryMs` (it died, or NATS is away) has its load removed.
//
// Routing decisions travel too: each dispatch's block keys, which receivers index for
// that worker as their own dispatches are (router.peerRoute), so a prefix warmed through
// one replica is found on the same worker by the others before the worker's KV events
// confirm it (or at all, for workers without events).
//
// With several server shards, each shard receives (its router has its own overlay and
// index), every shard publishes its routes, and shard 0 alone publishes the load: the
// shards share one load table, whose local part is the whole process's.

import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { LoadField } from '../router/load-table.js';
import type { ModelRouter } from '../router/router.js';
import type { Tracked } from '../router/worker-slots.js';
import { log } from '../log.js';
import { loadSubject, routeSubject } from './subjects.js';
import { decodeLoad, decodeRoute, encodeLoad, encodeRoute, type LoadRow } from './replica-messages.js';

export interface ReplicaSyncOptions {
  nc: NatsConnection;
  namespace: string;
  model: string;
  /** This process's replica id (every shard shares it). */
  replica: string;
  router: ModelRouter;
  /** Publish this process's load (one shard per process). */
  publishLoad: boolean;
  /** Worker URLs in the one form every replica uses (canonical). */
  canon: (url: string) => string;
  intervalMs?: number;
  heartbeatMs?: number;
  expiryMs?: number;
}

interface Applied {
  slot: number;
  workerId: number;
  requests: number;
  prefill: number;
  blocks: number;
}

interface Peer {
  seq: number;
  lastSeen: number;
  applied: Map<string, Applied>;
}

export interface ReplicaSyncStats {
  loadSent: number;
  loadReceived: number;
  routesSent: number;
  routesReceived: number;
  expired: number;
  malformed: number;
}

export class ReplicaSync {
  private readonly peers = new Map<string, Peer>();
  private readonly subs: Subscription[] = [];
  private timer: NodeJS.Timeout | null = null;
  private seq = 0;
  private lastSent = '';
  private lastSentAt = 0;
  private readonly loadSubj: string;
  private readonly routeSubj: string;
  readonly stats: ReplicaSyncStats = { loadSent: 0, loadReceived: 0, routesSent: 0, routesReceived: 0, expired: 0, malformed: 0 };

  constructor(private readonly o: ReplicaSyncOptions) {
    this.loadSubj = loadSubject(o.namespace, o.model);
    this.routeSubj = routeSubject(o.namespace, o.model);
  }

  start(): void {
    const nc = this.o.nc;
    this.subs.push(nc.subscribe(this.loadSubj, { callback: (err, m) => {
        if (!err) this.onLoad(m.data);
      } }));
    this.subs.push(nc.subscribe(this.routeSubj, { callback: (err, m) => {
        if (!err) this.onRoute(m.data);
      } }));
    this.o.router.onRoute = (t, rank, keys) => this.sendRoute(t, rank, keys);
    this.timer = setInterval(() => this.tick(), this.o.intervalMs ?? 50);
    this.timer.unref();
  }

  /** Other replicas' load on worker `t`, as last heard (for worker_active_requests). */
  remoteRequests(t: Tracked): number {
    return this.o.router.load.remoteOf(t.slot, LoadField.Requests);
  }

  private tick(): void {
    const now = performance.now();
    if (this.o.publishLoad) this.sendLoad(now);
    const expiry = this.o.expiryMs ?? 3000;
    for (const [id, p] of this.peers) {
      if (now - p.lastSeen <= expiry) continue;
      for (const a of p.applied.values()) this.unapply(a);
      this.peers.delete(id);
      this.stats.expired++;
      log.info('replica sync: a replica went quiet; its load is no longer counted', { replica: id });
    }
  }

  private sendLoad(now: number): void {
    const load = this.o.router.load;
    const rows: LoadRow[] = [];
    for (const t of this.o.router.slots.list) {
      const s = t.slot;
      const r = load.local(s, LoadField.Requests);
      const p = load.local(s, LoadField.PrefillTokens);
      const b = load.local(s, LoadField.DecodeBlocks);
      if (r !== 0 || p !== 0 || b !== 0) rows.push([this.o.canon(t.worker.client.url), r, p, b]);
    }
    const body = JSON.stringify(rows);
    if (body === this.lastSent && now - this.lastSentAt < (this.o.heartbeatMs ?? 1000)) return;
    this.lastSent = body;
    this.lastSentAt = now;
    try {
      this.o.nc.publish(this.loadSubj, encodeLoad({ replica: this.o.replica, seq: ++this.seq, workers: rows }));
      this.stats.loadSent++;
    } catch {
      // Connection closed: the next tick tries again (nothing to catch up: snapshots).
      this.lastSent = '';
    }
  }

  private onLoad(data: Uint8Array): void {
    const m = decodeLoad(data);
    if (!m) {
      this.stats.malformed++;
      return;
    }
    if (m.replica === this.o.replica) return;
    this.stats.loadReceived++;
    let p = this.peers.get(m.replica);
    if (!p) this.peers.set(m.replica, (p = { seq: 0, lastSeen: 0, applied: new Map() }));
    if (m.seq <= p.seq) return; // an older snapshot than the one applied
    p.seq = m.seq;
    p.lastSeen = performance.now();
    const next = new Map<string, Applied>();
    for (const [url, requests, prefill, blocks] of m.workers) {
      const t = this.o.router.trackedByUrl(url, this.o.canon);
      if (!t) continue; // a worker this replica does not know (yet)
      const prev = p.applied.get(url);
      const same = prev && prev.slot === t.slot && prev.workerId === t.worker.id;
      if (prev && !same) this.unapply(prev);
      const a: Applied = { slot: t.slot, workerId: t.worker.id, requests, prefill, blocks };
      const was = same ? prev : { requests: 0, prefill: 0, blocks: 0 };
      this.add(t.slot, requests - was.requests, prefill - was.prefill, blocks - was.blocks);
      next.set(url, a);
    }
    for (const [url, prev] of p.applied) if (!next.has(url)) this.unapply(prev);
    p.applied = next;
  }

  private unapply(a: Applied): void {
    // Only while the slot still holds that worker (a reused slot was cleared on reuse).
    const t = this.o.router.slots.list.find((x) => x.slot === a.slot);
    if (t && t.worker.id === a.workerId) this.add(a.slot, -a.requests, -a.prefill, -a.blocks);
  }

  private add(slot: number, requests: number, prefill: number, blocks: number): void {
    const load = this.o.router.load;
    load.addRemote(slot, LoadField.Requests, requests);
    load.addRemote(slot, LoadField.PrefillTokens, prefill);
    load.addRemote(slot, LoadField.DecodeBlocks, blocks);
  }

  private sendRoute(t: Tracked, rank: number, keys: Float64Array): void {
    try {
      this.o.nc.publish(this.routeSubj, encodeRoute(this.o.replica, this.o.canon(t.worker.client.url), rank, keys));
      this.stats.routesSent++;
    } catch {
      /* connection closed: a routing hint, not worth queueing */
    }
  }

  private onRoute(data: Uint8Array): void {
    const m = decodeRoute(data);
    if (!m) {
      this.stats.malformed++;
      return;
    }
    if (m.replica === this.o.replica) return;
    this.stats.routesReceived++;
    const t = this.o.router.trackedByUrl(m.url, this.o.canon);
    if (t) this.o.router.peerRoute(t, m.rank, m.keys);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.o.router.onRoute = null;
    for (const s of this.subs) s.unsubscribe();
    for (const p of this.peers.values()) for (const a of p.applied.values()) this.unapply(a);
    this.peers.clear();
  }
}
