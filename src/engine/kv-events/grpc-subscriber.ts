// KV events from a worker's SubscribeKvEvents server stream (smg.grpc.common),
// on either protocol (the rpc is the same on SglangScheduler and VllmEngine).
//
// Every (re)connection subscribes from sequence 0 and starts with a `reset`:
// the worker's state is rebuilt from what follows (Portico's mock sends a
// snapshot of its cache first; a worker without snapshots rebuilds as blocks
// are stored). Batches must come in consecutive sequence numbers; a gap
// resets and resubscribes. A stream that fails resets too (nothing known
// about a worker that cannot be heard) and is retried after `retryMs`.

import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { create } from '@bufbuild/protobuf';

import { SubscribeKvEventsRequestSchema, type EngineLoad, type KvEventBatch } from '../../gen/common_pb.js';
import { SglangScheduler } from '../../gen/sglang_scheduler_pb.js';
import { VllmEngine } from '../../gen/vllm_engine_pb.js';
import { protocolOf } from '../factory.js';
import { toBaseUrl } from '../grpc-connection.js';
import { H2Client } from '../h2/client.js';
import { h2GrpcTransport } from '../h2/universal-client.js';
import {
  blockImages,
  newSourceStats,
  type KvBlockRef,
  type KvEvent,
  type KvEventSink,
  type KvEventSource,
  type KvEventSourceStats,
  type WorkerLoad,
} from './types.js';

export interface GrpcKvSubscriberOptions {
  /** Worker URL as given to createEngineClient (grpc://… or vllm+grpc://…). */
  url: string;
  sink: KvEventSink;
  /** Name used in events. Default: the URL. */
  worker?: string;
  /** Wait before reconnecting after a failure. Default 500 ms. */
  retryMs?: number;
  /** Load records riding on the stream (workers that send them). */
  onLoad?: (l: WorkerLoad) => void;
  /** Called with every failure (for logs). */
  onError?: (err: unknown) => void;
}

type KvClient = Client<typeof SglangScheduler> | Client<typeof VllmEngine>;

class GapError extends Error {}

export class GrpcKvEventSubscriber implements KvEventSource {
  readonly worker: string;
  readonly stats: KvEventSourceStats = newSourceStats();
  private readonly h2: H2Client;
  private readonly client: KvClient;
  private cancel: AbortController | undefined;
  private closed = false;
  private running = false;

  constructor(private readonly o: GrpcKvSubscriberOptions) {
    this.worker = o.worker ?? o.url;
    const baseUrl = toBaseUrl(o.url);
    this.h2 = new H2Client(baseUrl);
    const transport = h2GrpcTransport(this.h2, baseUrl);
    this.client = protocolOf(o.url) === 'vllm' ? createClient(VllmEngine, transport) : createClient(SglangScheduler, transport);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.loop();
  }

  close(): void {
    this.closed = true;
    this.cancel?.abort();
    this.h2.close(new ConnectError(`KV event subscriber for ${this.worker} closed`, Code.Canceled));
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      this.cancel = new AbortController();
      this.stats.connects++;
      let expect: bigint | undefined;
      let sentReset = false;
      const reset = (reason: string) => this.o.sink([{ kind: 'reset', worker: this.worker, reason }]);
      try {
        const stream = this.client.subscribeKvEvents(
          create(SubscribeKvEventsRequestSchema, { startSequenceNumber: 0n }),
          { signal: this.cancel.signal },
        );
        for await (const b of stream) {
          if (!sentReset) {
            reset(this.stats.connects === 1 ? 'connect' : 'reconnect');
            sentReset = true;
          }
          const seq = b.sequenceNumber;
          if (b.snapshot) {
            // Snapshot chunks share the sequence number they describe the cache at.
            expect = seq + 1n;
          } else if (expect !== undefined && seq !== expect) {
            if (seq < expect) continue; // duplicate
            this.stats.gaps++;
            throw new GapError(`KV event gap on ${this.worker}: expected ${expect}, got ${seq}`);
          } else expect = seq + 1n;
          const events = normaliseBatch(b, this.worker);
          this.stats.batches++;
          this.stats.events += events.length;
          this.stats.lastSeq = Number(seq);
          if (events.length) this.o.sink(events);
          if (b.load && this.o.onLoad) this.o.onLoad(normaliseLoad(b.load, this.worker, b.dpRank ?? 0));
        }
        if (!this.closed) throw new Error(`KV event stream of ${this.worker} ended`);
      } catch (err) {
        if (this.closed) return;
        this.cancel.abort();
        this.o.onError?.(err);
        if (err instanceof GapError) {
          reset('gap');
          continue; // resubscribe at once
        }
        if (sentReset) reset('disconnect');
        await new Promise((r) => setTimeout(r, this.o.retryMs ?? 500));
      }
    }
  }
}

/** smg.grpc.common.KvEventBatch → normalised events. */
export function normaliseBatch(b: KvEventBatch, worker: string): KvEvent[] {
  const dpRank = b.dpRank ?? 0;
  const out: KvEvent[] = [];
  for (const e of b.events) {
    const d = e.data;
    switch (d.case) {
      case 'stored': {
        const blocks = d.value.blocks.map((x): KvBlockRef => {
          const images = blockImages(x.extraKeys.flatMap((k) => (k.key.case === 'multimodal' ? [{ identifier: k.key.value.identifier, offset: Number(k.key.value.offset) }] : [])));
          return images ? { hash: x.blockHash, tokenIds: x.tokenIds, images } : { hash: x.blockHash, tokenIds: x.tokenIds };
        });
        out.push({
          kind: 'stored',
          worker,
          dpRank,
          parentHash: d.value.parentBlockHash,
          blocks,
          blockSize: d.value.blocks[0]?.blockSize ?? 0,
          ...(d.value.loraName ? { loraName: d.value.loraName } : d.value.blocks.some((x) => x.loraId !== undefined && x.loraId !== 0n) ? { loraUnnamed: true } : {}),
        });
        break;
      }
      case 'removed':
        out.push({ kind: 'removed', worker, dpRank, hashes: d.value.blockHashes });
        break;
      case 'cleared':
        out.push({ kind: 'cleared', worker, dpRank });
        break;
    }
  }
  return out;
}

export function normaliseLoad(l: EngineLoad, worker: string, dpRank: number): WorkerLoad {
  return {
    worker,
    dpRank,
    runningRequests: l.runningRequests,
    waitingRequests: l.waitingRequests,
    tokenUsage: l.tokenUsage,
    activeTokenUsage: l.activeTokenUsage,
    waitingUncachedTokens: l.waitingUncachedTokens,
    usedTokens: l.numUsedTokens,
    capacityTokens: l.maxTotalNumTokens,
    genThroughput: l.genThroughput,
    maxRunningRequests: l.maxRunningRequests,
    sample: Number(l.sample),
  };
}
