// An engine's side of the KV event plane: its batches, in order, into the namespace's
// JetStream stream (created when missing), so a frontend that connects later or
// reconnects reads every batch it missed from the stream. While NATS is away, batches
// wait in a bounded queue and go out in order once it is back; past the bound the
// oldest are dropped (subscribers see the gap in `seq` and start the worker over).

import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { log } from '../log.js';
import { encodeBatch, type WireBatch } from './kv-wire.js';
import { ensureKvStream } from './kv-stream.js';
import { kvSubject } from './subjects.js';

export interface KvPublisherStats {
  published: number;
  dropped: number;
  retries: number;
}

export class NatsKvPublisher {
  private readonly js: JetStreamClient;
  private readonly subject: string;
  private readonly queue: WireBatch[] = [];
  private pumping = false;
  private closed = false;
  readonly stats: KvPublisherStats = { published: 0, dropped: 0, retries: 0 };

  constructor(
    private readonly nc: NatsConnection,
    private readonly o: { namespace: string; model: string; worker: string; maxQueued?: number },
  ) {
    this.js = jetstream(nc, { timeout: 2000 });
    this.subject = kvSubject(o.namespace, o.model, o.worker);
  }

  async start(): Promise<void> {
    await ensureKvStream(await jetstreamManager(this.nc, { timeout: 5000 }), this.o.namespace);
  }

  publish(b: WireBatch): void {
    if (this.closed) return;
    this.queue.push(b);
    const max = this.o.maxQueued ?? 100_000;
    if (this.queue.length > max) {
      this.queue.shift();
      this.stats.dropped++;
    }
    if (!this.pumping) void this.pump();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    let delay = 100;
    while (this.queue.length > 0 && !this.closed) {
      const b = this.queue[0]!;
      try {
        // The message id makes a retried publish idempotent (JetStream's duplicate window).
        await this.js.publish(this.subject, encodeBatch(b), { msgID: `${this.o.worker}#${b.seq}#${this.epoch}` });
        this.queue.shift();
        this.stats.published++;
        delay = 100;
      } catch (err) {
        this.stats.retries++;
        if (this.stats.retries === 1 || this.stats.retries % 50 === 0) log.warn('KV event publish failed; retrying in order', { error: String(err), queued: this.queue.length });
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 2000);
      }
    }
    this.pumping = false;
  }

  /** This process's start, so that a restarted engine's seq 1 is not a duplicate of the last one's. */
  private readonly epoch = Date.now().toString(36);

  /** Stop publishing (queued batches are dropped). */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
  }
}
