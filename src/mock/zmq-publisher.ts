// vLLM's ZMQ KV-event publisher format, for the mock engine:
// PUB frames [topic, 8-byte big-endian sequence, msgpack(batch)], and an
// optional ROUTER replay socket: a request [start_seq 8 bytes] (behind the
// REQ/DEALER empty delimiter) is answered with one [seq, payload] message per
// buffered batch from start_seq on, then [-1 as 8 bytes, empty].
//
// Batch layouts (vLLM's msgspec structs):
//   array: [ts, [event...], dp_rank]  with events
//          ["BlockStored", hashes, parent|null, token_ids, block_size, lora_id, medium, lora_name]
//          ["BlockRemoved", hashes, medium]
//          ["AllBlocksCleared"]
//   map:   {ts, events: [{type: "BlockStored", block_hashes, parent_block_hash, token_ids,
//          block_size, lora_id, medium, lora_name} | {type: "BlockRemoved", block_hashes, medium}
//          | {type: "AllBlocksCleared"}], data_parallel_rank}
// Every rank publishes on this one socket with one sequence; the rank rides
// in the batch.

import { encode } from '@msgpack/msgpack';
import * as zmq from 'zeromq';

import type { HubBatch, KvEventHub } from './kv-event-hub.js';
import type { PoolEvent } from './kv-pool.js';

export type ZmqLayout = 'array' | 'map';

export interface ZmqPublisherOptions {
  /** e.g. tcp://127.0.0.1:5557 (bound). */
  endpoint: string;
  replayEndpoint?: string;
  topic?: string;
  layout?: ZmqLayout;
}

export class ZmqKvPublisher {
  private readonly pub = new zmq.Publisher({ sendHighWaterMark: 100_000 });
  private router: zmq.Router | undefined;
  private readonly buffer: Array<[number, Uint8Array]> = [];
  private queue: Array<[number, Uint8Array]> = [];
  private sending = false;
  private dropSends = 0;
  private unsubscribe: (() => void) | undefined;
  private readonly topic: Buffer;
  private readonly layout: ZmqLayout;
  /** Bound endpoints (with the real port when 0 was asked). */
  endpoint = '';
  replayEndpoint = '';

  constructor(private readonly hub: KvEventHub, private readonly o: ZmqPublisherOptions) {
    this.topic = Buffer.from(o.topic ?? '', 'utf8');
    this.layout = o.layout ?? 'map';
  }

  async start(): Promise<void> {
    await this.pub.bind(this.o.endpoint);
    this.endpoint = this.pub.lastEndpoint ?? this.o.endpoint;
    if (this.o.replayEndpoint) {
      this.router = new zmq.Router();
      await this.router.bind(this.o.replayEndpoint);
      this.replayEndpoint = this.router.lastEndpoint ?? this.o.replayEndpoint;
      void this.serveReplay(this.router);
    }
    this.unsubscribe = this.hub.subscribe((b) => this.publish(b));
  }

  private publish(b: HubBatch): void {
    const payload = encodeBatch(b, this.hub.blockSize, this.layout);
    this.buffer.push([b.seq, payload]);
    if (this.buffer.length > 10_000) this.buffer.splice(0, 1000);
    if (this.dropSends > 0) {
      this.dropSends--;
      return; // replayable, never sent live
    }
    this.queue.push([b.seq, payload]);
    if (!this.sending) void this.drain();
  }

  private async drain(): Promise<void> {
    this.sending = true;
    try {
      while (this.queue.length) {
        const list = this.queue;
        this.queue = [];
        for (const [seq, payload] of list) {
          if (this.pub.closed) return;
          await this.pub.send([this.topic, seqBytes(seq), payload]);
        }
      }
    } catch {
      // Socket closed under us: nothing more to publish.
    } finally {
      this.sending = false;
    }
  }

  private async serveReplay(router: zmq.Router): Promise<void> {
    try {
      for await (const frames of router) {
        const [id, , start] = frames;
        if (!id || !start || start.length !== 8) continue;
        const from = Number(start.readBigInt64BE(0));
        for (const [seq, payload] of this.buffer) {
          if (seq >= from) await router.send([id, Buffer.alloc(0), seqBytes(seq), payload]);
        }
        await router.send([id, Buffer.alloc(0), seqBytes(-1), Buffer.alloc(0)]);
      }
    } catch {
      // closed
    }
  }

  /** Test hook: keep the next `n` batches for replay but do not publish them. */
  dropNextSends(n = 1): void {
    this.dropSends += n;
  }

  close(): void {
    this.unsubscribe?.();
    this.pub.close();
    this.router?.close();
  }
}

export function seqBytes(seq: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(seq));
  return b;
}

export function encodeBatch(b: HubBatch, blockSize: number, layout: ZmqLayout): Uint8Array {
  const events = b.events.map((e) => (layout === 'array' ? arrayEvent(e, blockSize) : mapEvent(e, blockSize)));
  return layout === 'array'
    ? encode([b.ts, events, b.dpRank])
    : encode({ ts: b.ts, events, data_parallel_rank: b.dpRank });
}

function arrayEvent(e: PoolEvent, blockSize: number): unknown[] {
  switch (e.kind) {
    case 'stored':
      return ['BlockStored', e.blocks.map((x) => x.hash), e.parentHash ?? null, e.blocks.flatMap((x) => x.tokenIds), blockSize, null, 'GPU', null];
    case 'removed':
      return ['BlockRemoved', e.hashes, 'GPU'];
    case 'cleared':
      return ['AllBlocksCleared'];
  }
}

function mapEvent(e: PoolEvent, blockSize: number): Record<string, unknown> {
  switch (e.kind) {
    case 'stored':
      return {
        type: 'BlockStored',
        block_hashes: e.blocks.map((x) => x.hash),
        parent_block_hash: e.parentHash ?? null,
        token_ids: e.blocks.flatMap((x) => x.tokenIds),
        block_size: blockSize,
        lora_id: null,
        medium: 'GPU',
        lora_name: null,
      };
    case 'removed':
      return { type: 'BlockRemoved', block_hashes: e.hashes, medium: 'GPU' };
    case 'cleared':
      return { type: 'AllBlocksCleared' };
  }
}
