// A worker's KV events from the event plane: an ordered JetStream consumer of its
// subject, from the oldest batch the stream keeps, so a frontend that starts after
// the worker, or whose NATS connection dropped, reads every batch it missed (the
// ordered consumer resumes where it stopped). Batches carry consecutive `seq`s from 1:
// a gap (batches dropped or trimmed) or a restart (seq back to 1) resets the worker's
// state, and what follows rebuilds it; a malformed message resets too (nothing after it
// can be trusted to chain).

import { DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { KvEventSink, KvEventSource, KvEventSourceStats } from '../engine/kv-events/index.js';
import { newSourceStats } from '../engine/kv-events/types.js';
import { decodeBatch } from './kv-wire.js';
import { ensureKvStream } from './kv-stream.js';
import { kvSubject } from './subjects.js';

/** How long one pull request waits for batches; also bounds a stalled consumer's recovery (see run). */
const PULL_EXPIRES_MS = 5000;

export interface NatsKvSourceOptions {
  nc: NatsConnection;
  namespace: string;
  model: string;
  /** The worker's URL: names it in events and in its subject. */
  url: string;
  sink: KvEventSink;
  onError?: (err: unknown) => void;
}

export class NatsKvEventSource implements KvEventSource {
  readonly worker: string;
  readonly stats: KvEventSourceStats = newSourceStats();
  private messages: ConsumerMessages | null = null;
  private closed = false;
  /** Malformed messages skipped. */
  bad = 0;

  constructor(private readonly o: NatsKvSourceOptions) {
    this.worker = o.url;
  }

  start(): void {
    void this.run().catch((err) => {
      this.o.onError?.(err);
      if (!this.closed) setTimeout(() => this.start(), 500).unref();
    });
  }

  private async run(): Promise<void> {
    const stream = await ensureKvStream(await jetstreamManager(this.o.nc, { timeout: 5000 }), this.o.namespace);
    if (this.closed) return;
    const consumer = await jetstream(this.o.nc).consumers.get(stream, { filter_subjects: kvSubject(this.o.namespace, this.o.model, this.o.url), deliver_policy: DeliverPolicy.All });
    // A short pull expiry: after a nats-server restart the client (@nats-io/jetstream 3.4)
    // recreates the ordered consumer, but its pulls then stalled (a 408, no more batches)
    // until two idle heartbeats were missed (expires / 2 each): 30 s of KV events not
    // applied with the default 30 s expiry, about PULL_EXPIRES_MS with this one
    // (test/event-plane-reconnect.e2e.test.ts).
    const messages = await consumer.consume({ expires: PULL_EXPIRES_MS });
    if (this.closed) {
      await messages.close();
      return;
    }
    this.messages = messages;
    this.stats.connects++;
    this.reset('subscribed');
    for await (const m of messages) this.onMessage(m.data);
  }

  private reset(reason: string): void {
    this.o.sink([{ kind: 'reset', worker: this.worker, reason }]);
  }

  private onMessage(data: Uint8Array): void {
    let batch;
    try {
      batch = decodeBatch(data, this.worker);
    } catch (err) {
      this.bad++;
      this.o.onError?.(err);
      this.stats.lastSeq = -1;
      this.reset('malformed batch');
      return;
    }
    const last = this.stats.lastSeq;
    if (last >= 0 && batch.seq !== last + 1) {
      // seq back at 1: the worker restarted (its cache is empty); else batches were lost.
      if (batch.seq !== 1) this.stats.gaps++;
      this.reset(batch.seq === 1 ? 'worker restarted' : 'sequence gap');
    }
    this.stats.lastSeq = batch.seq;
    this.stats.batches++;
    this.stats.events += batch.events.length;
    if (batch.events.length > 0) this.o.sink(batch.events);
  }

  close(): void {
    this.closed = true;
    void this.messages?.close();
  }
}
