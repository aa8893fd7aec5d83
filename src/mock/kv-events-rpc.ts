// The SubscribeKvEvents server stream (smg.grpc.common), shared by the
// SGLang and vLLM services of the mock engine.
//
// start_sequence_number > 0 and still buffered: replay from there, then live.
// Otherwise (0, or too old): a snapshot of every cached block first — batches
// whose `snapshot` is set and whose sequence_number is the last published
// one — then live batches from the next number. A subscriber that clears its
// view of this worker on snapshot chunk 0 is exact from there on.

import { create } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';

import {
  KvEventBatchSchema,
  type EngineLoad,
  type KvCacheEvent,
  type KvEventBatch,
  type SubscribeKvEventsRequest,
} from '../gen/common_pb.js';
import type { HubBatch, KvEventHub, SnapshotBlock } from './kv-event-hub.js';
import type { PoolEvent } from './kv-pool.js';

const SNAPSHOT_BLOCKS_PER_BATCH = 256;

export async function* subscribeKvEvents(
  hub: KvEventHub, req: SubscribeKvEventsRequest, ctx: HandlerContext, loadOf?: (dpRank: number) => EngineLoad,
  /** The engine shutting down: the stream ends (OK), so a graceful close need not wait for it. */
  ending?: AbortSignal,
): AsyncGenerator<KvEventBatch> {
  let sample = 0n;
  // Live batches carry the rank's load at send time (EngineLoad), so a
  // router reading this stream need not poll GetLoads.
  const live = (b: HubBatch) => {
    const msg = toProto(b, hub.blockSize);
    if (loadOf) msg.load = { ...loadOf(b.dpRank), sample: ++sample };
    return msg;
  };
  let queue: HubBatch[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = hub.subscribe((b) => {
    queue.push(b);
    const w = wake;
    wake = undefined;
    w?.();
  });
  const onClose = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  ctx.signal.addEventListener('abort', onClose, { once: true });
  ending?.addEventListener('abort', onClose, { once: true });
  try {
    const start = Number(req.startSequenceNumber);
    const replay = start > 0 ? hub.replayFrom(start) : undefined;
    if (replay) {
      for (const b of replay) yield live(b);
      const last = replay.at(-1)?.seq ?? start - 1;
      queue = queue.filter((b) => b.seq > last);
    } else {
      const base = hub.lastSeq();
      yield* snapshotBatches(hub.snapshot(), base, hub.blockSize);
      queue = queue.filter((b) => b.seq > base);
    }
    while (!ctx.signal.aborted && !ending?.aborted) {
      if (queue.length === 0) {
        await new Promise<void>((r) => (wake = r));
        continue;
      }
      const list = queue;
      queue = [];
      for (const b of list) yield live(b);
    }
  } finally {
    unsubscribe();
    ctx.signal.removeEventListener('abort', onClose);
    ending?.removeEventListener('abort', onClose);
  }
}

function* snapshotBatches(blocks: SnapshotBlock[], seq: number, blockSize: number): Generator<KvEventBatch> {
  const count = Math.max(1, Math.ceil(blocks.length / SNAPSHOT_BLOCKS_PER_BATCH));
  for (let index = 0; index < count; index++) {
    const part = blocks.slice(index * SNAPSHOT_BLOCKS_PER_BATCH, (index + 1) * SNAPSHOT_BLOCKS_PER_BATCH);
    const events: KvCacheEvent[] = part.map((b, i) => ({
      $typeName: 'smg.grpc.common.KvCacheEvent',
      eventId: BigInt(index * SNAPSHOT_BLOCKS_PER_BATCH + i),
      data: {
        case: 'stored',
        value: {
          $typeName: 'smg.grpc.common.KvBlocksStored',
          blocks: [{ $typeName: 'smg.grpc.common.KvBlock', blockHash: BigInt(b.hash), tokenIds: b.tokenIds, blockSize, extraKeys: [] }],
          parentBlockHash: b.parentHash === undefined ? undefined : BigInt(b.parentHash),
        },
      },
    }));
    // One rank per snapshot batch would be truer; the rank of a block rides on
    // its batch, so split the part by rank.
    const byRank = new Map<number, KvCacheEvent[]>();
    part.forEach((b, i) => {
      let l = byRank.get(b.dpRank);
      if (!l) byRank.set(b.dpRank, (l = []));
      l.push(events[i]!);
    });
    if (byRank.size === 0) byRank.set(0, []);
    for (const [dpRank, evs] of byRank) {
      yield create(KvEventBatchSchema, {
        sequenceNumber: BigInt(seq),
        timestamp: Date.now() / 1000,
        events: evs,
        dpRank,
        snapshot: { index, count, blocks: BigInt(blocks.length), unknownBefore: 0n },
      });
    }
  }
}

let eventIds = 0n;

export function toProto(b: HubBatch, blockSize: number): KvEventBatch {
  return create(KvEventBatchSchema, {
    sequenceNumber: BigInt(b.seq),
    timestamp: b.ts,
    dpRank: b.dpRank,
    events: b.events.map((e) => toProtoEvent(e, blockSize, eventIds++)),
  });
}

function toProtoEvent(e: PoolEvent, blockSize: number, eventId: bigint): KvCacheEvent {
  const base = { $typeName: 'smg.grpc.common.KvCacheEvent' as const, eventId };
  switch (e.kind) {
    case 'stored':
      return {
        ...base,
        data: {
          case: 'stored',
          value: {
            $typeName: 'smg.grpc.common.KvBlocksStored',
            blocks: e.blocks.map((b) => ({
              $typeName: 'smg.grpc.common.KvBlock' as const,
              blockHash: BigInt(b.hash),
              tokenIds: b.tokenIds,
              blockSize,
              extraKeys: [],
            })),
            parentBlockHash: e.parentHash === undefined ? undefined : BigInt(e.parentHash),
          },
        },
      };
    case 'removed':
      return {
        ...base,
        data: { case: 'removed', value: { $typeName: 'smg.grpc.common.KvBlocksRemoved', blockHashes: e.hashes.map(BigInt) } },
      };
    case 'cleared':
      return { ...base, data: { case: 'cleared', value: { $typeName: 'smg.grpc.common.KvCacheCleared' } } };
  }
}
