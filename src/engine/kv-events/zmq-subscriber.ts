// KV events from vLLM's ZMQ publisher: SUB to [topic, seq (8 bytes,
// big-endian), msgpack batch] messages. A sequence gap asks the publisher's
// replay socket (when given) for the missing batches; if they cannot all be
// had, the worker is reset and rebuilt from the live stream. A sequence that
// goes backwards means the publisher restarted: reset.

import * as zmq from 'zeromq';

import { decodeVllmBatch } from './vllm-msgpack.js';
import { newSourceStats, type KvEventSink, type KvEventSource, type KvEventSourceStats } from './types.js';

export interface ZmqKvSubscriberOptions {
  /** PUB endpoint, e.g. tcp://10.0.0.5:5557. */
  endpoint: string;
  /** ROUTER replay endpoint, e.g. tcp://10.0.0.5:5558. */
  replayEndpoint?: string;
  /** Topic prefix to subscribe to. Default '' (all). */
  topic?: string;
  /** Name used in events. */
  worker: string;
  sink: KvEventSink;
  /** Replay answer deadline. Default 1000 ms. */
  replayTimeoutMs?: number;
  onError?: (err: unknown) => void;
}

export class ZmqKvEventSubscriber implements KvEventSource {
  readonly worker: string;
  readonly stats: KvEventSourceStats = newSourceStats();
  private readonly sub = new zmq.Subscriber({ receiveHighWaterMark: 100_000 });
  private expect: bigint | undefined;
  private closed = false;

  constructor(private readonly o: ZmqKvSubscriberOptions) {
    this.worker = o.worker;
  }

  start(): void {
    this.sub.connect(this.o.endpoint);
    this.sub.subscribe(this.o.topic ?? '');
    this.stats.connects++;
    this.o.sink([{ kind: 'reset', worker: this.worker, reason: 'connect' }]);
    void this.loop();
  }

  close(): void {
    this.closed = true;
    this.sub.close();
  }

  private async loop(): Promise<void> {
    try {
      for await (const frames of this.sub) {
        if (frames.length < 3) continue;
        const seq = frames[1]!.readBigInt64BE(0);
        await this.receive(seq, frames[2]!);
      }
    } catch (err) {
      if (!this.closed) this.o.onError?.(err);
    }
  }

  private async receive(seq: bigint, payload: Buffer): Promise<void> {
    const expect = this.expect;
    if (expect !== undefined && seq !== expect) {
      if (seq < expect) {
        // Sequence went back: the publisher restarted.
        this.o.sink([{ kind: 'reset', worker: this.worker, reason: 'publisher restart' }]);
      } else {
        this.stats.gaps++;
        if (!(await this.replay(expect, seq))) {
          this.o.sink([{ kind: 'reset', worker: this.worker, reason: 'gap' }]);
        }
      }
    }
    this.apply(seq, payload);
  }

  private apply(seq: bigint, payload: Uint8Array): void {
    try {
      const b = decodeVllmBatch(payload, this.worker);
      this.stats.batches++;
      this.stats.events += b.events.length;
      if (b.events.length) this.o.sink(b.events);
    } catch (err) {
      this.o.onError?.(err);
    }
    this.expect = seq + 1n;
    this.stats.lastSeq = Number(seq);
  }

  /** Fetch and apply batches [from, until) from the replay socket; false if incomplete. */
  private async replay(from: bigint, until: bigint): Promise<boolean> {
    if (!this.o.replayEndpoint) return false;
    const dealer = new zmq.Dealer({ receiveTimeout: this.o.replayTimeoutMs ?? 1000, linger: 0 });
    try {
      dealer.connect(this.o.replayEndpoint);
      const start = Buffer.alloc(8);
      start.writeBigInt64BE(from);
      await dealer.send([Buffer.alloc(0), start]);
      const got: Array<[bigint, Buffer]> = [];
      for (;;) {
        const frames = await dealer.receive();
        const seqFrame = frames.length >= 3 ? frames[1]! : frames[0]!;
        const payload = frames.length >= 3 ? frames[2]! : frames[1]!;
        const seq = seqFrame.readBigInt64BE(0);
        if (seq < 0n) break;
        if (seq >= from && seq < until) got.push([seq, payload]);
      }
      got.sort((a, b) => (a[0] < b[0] ? -1 : 1));
      let next = from;
      for (const [seq] of got) if (seq === next) next++;
      if (next !== until) return false;
      for (const [seq, payload] of got) this.apply(seq, payload);
      return true;
    } catch (err) {
      this.o.onError?.(err);
      return false;
    } finally {
      dealer.close();
    }
  }
}
