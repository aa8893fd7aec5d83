// Rate-limit sync: frontend replicas draw on one budget per API key. Each replica
// publishes, every `intervalMs`, what it spent from each key since its previous message
// (requests and tokens, as deltas) and how many of the key's generations it has in flight
// (a snapshot); every other replica takes the deltas from its own budgets and counts the
// in-flight figures against the key's concurrent-requests limit. One thread per process
// does this (shard 0): the budgets are the process's, shared by its shards.
//
// How far the replicas can overshoot a limit together:
//   - connected: by what the other replicas admit within one interval plus the transit
//     time (each admits against a budget that does not yet show the others' latest
//     spending), at most (replicas - 1) x the limit;
//   - NATS away: each replica enforces every limit alone, so a key can spend up to
//     replicas x its limit per window. The in-flight figures of a replica not heard from
//     for `expiryMs` are dropped. Nothing stops serving: admission never waits on NATS.
// A lost message loses its deltas (the key is under-charged by that much); a repeated or
// reordered one is ignored (seq).

import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { RateLimits, SlotTable } from '../limits/key-limits.js';
import { log } from '../log.js';
import { limitSubject } from './subjects.js';
import { decodeUsage, encodeUsage, type UsageRow } from './limit-messages.js';

export interface LimitSyncOptions {
  nc: NatsConnection;
  namespace: string;
  /** This process's replica id. */
  replica: string;
  limits: RateLimits;
  intervalMs?: number;
  /** A message at least this often while any key has generations in flight (liveness). */
  heartbeatMs?: number;
  expiryMs?: number;
}

interface Peer {
  seq: number;
  lastSeen: number;
  /** Its generations in flight, per slot. */
  inflight: Map<number, number>;
}

export interface LimitSyncStats {
  sent: number;
  received: number;
  malformed: number;
  expired: number;
  /** Requests and tokens other replicas spent, as taken from this process's budgets. */
  requestsApplied: number;
  tokensApplied: number;
}

export class LimitSync {
  private readonly subject: string;
  private sub: Subscription | null = null;
  private timer: NodeJS.Timeout | null = null;
  private seq = 0;
  private lastSentAt = 0;
  private readonly peers = new Map<string, Peer>();
  /** Per slot, the in-flight figure last sent. */
  private sentInflight: number[] = [];
  private idsOf: SlotTable | null = null;
  private slotById = new Map<string, number>();
  readonly stats: LimitSyncStats = { sent: 0, received: 0, malformed: 0, expired: 0, requestsApplied: 0, tokensApplied: 0 };

  constructor(private readonly o: LimitSyncOptions) {
    this.subject = limitSubject(o.namespace);
  }

  start(): void {
    this.sub = this.o.nc.subscribe(this.subject, {
      callback: (err, m) => {
        if (!err) this.onUsage(m.data);
      },
    });
    this.timer = setInterval(() => this.tick(), this.o.intervalMs ?? 50);
    this.timer.unref();
  }

  private slots(): Map<string, number> {
    const t = this.o.limits.table;
    if (t !== this.idsOf) {
      this.idsOf = t;
      this.slotById = new Map();
      if (t) t.ids.forEach((id, slot) => id !== '' && t.limits[slot] && this.slotById.set(id, slot));
    }
    return this.slotById;
  }

  private tick(): void {
    const now = performance.now();
    this.send(now);
    const expiry = this.o.expiryMs ?? 3000;
    for (const [id, p] of this.peers) {
      if (now - p.lastSeen <= expiry) continue;
      this.peers.delete(id);
      for (const slot of p.inflight.keys()) this.recount(slot);
      this.stats.expired++;
      log.info('rate-limit sync: a replica went quiet; its requests in flight no longer count', { replica: id });
    }
  }

  private send(now: number): void {
    const t = this.o.limits.table;
    if (!t || !this.o.limits.active) return;
    const budgets = this.o.limits.budgets;
    const heartbeat = now - this.lastSentAt >= (this.o.heartbeatMs ?? 1000);
    const rows: UsageRow[] = [];
    for (let slot = 0; slot < t.ids.length; slot++) {
      const id = t.ids[slot]!;
      if (id === '') continue;
      const [requests, tokens] = budgets.takeUnsent(slot);
      const inflight = budgets.inflight(slot);
      if (requests !== 0 || tokens !== 0 || inflight !== (this.sentInflight[slot] ?? 0) || (heartbeat && inflight > 0)) rows.push([id, requests, tokens, inflight]);
      this.sentInflight[slot] = inflight;
    }
    if (rows.length === 0 && !heartbeat) return;
    this.lastSentAt = now;
    try {
      this.o.nc.publish(this.subject, encodeUsage({ replica: this.o.replica, seq: ++this.seq, keys: rows }));
      this.stats.sent++;
    } catch {
      // The connection is closed: these deltas are lost (the keys are under-charged by them).
    }
  }

  private onUsage(data: Uint8Array): void {
    const m = decodeUsage(data);
    if (!m) {
      this.stats.malformed++;
      return;
    }
    if (m.replica === this.o.replica) return;
    this.stats.received++;
    let p = this.peers.get(m.replica);
    if (!p) this.peers.set(m.replica, (p = { seq: 0, lastSeen: 0, inflight: new Map() }));
    p.lastSeen = performance.now();
    if (m.seq <= p.seq) return;
    p.seq = m.seq;
    const slots = this.slots();
    const budgets = this.o.limits.budgets;
    for (const [id, requests, tokens, inflight] of m.keys) {
      const slot = slots.get(id);
      if (slot === undefined) continue; // a key this replica does not limit
      if (requests !== 0 || tokens !== 0) {
        budgets.spendRemote(slot, requests, tokens);
        this.stats.requestsApplied += requests;
        this.stats.tokensApplied += tokens;
      }
      if ((p.inflight.get(slot) ?? 0) !== inflight) {
        if (inflight === 0) p.inflight.delete(slot);
        else p.inflight.set(slot, inflight);
        this.recount(slot);
      }
    }
  }

  /** Other replicas' generations in flight for `slot`, summed into the budget table. */
  private recount(slot: number): void {
    let n = 0;
    for (const p of this.peers.values()) n += p.inflight.get(slot) ?? 0;
    this.o.limits.budgets.setRemoteInflight(slot, n);
  }

  /** For /health: the replicas heard from, and what they spent here (undefined while no limit is configured). */
  view(): { peers: number; requests_applied: number; tokens_applied: number } | undefined {
    if (!this.o.limits.active) return undefined;
    return { peers: this.peers.size, requests_applied: this.stats.requestsApplied, tokens_applied: this.stats.tokensApplied };
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.sub?.unsubscribe();
    this.sub = null;
    for (const p of this.peers.values()) for (const slot of p.inflight.keys()) this.o.limits.budgets.setRemoteInflight(slot, 0);
    this.peers.clear();
  }
}
