// --event-plane for the mock engine: every batch of its KV event hub also goes to NATS
// (src/events/kv-publisher.ts), in the event plane's records. Batches published before
// the publisher started are not sent: it starts with the engine, before any request.

import type { NatsKvPublisher } from '../events/kv-publisher.js';
import type { WireEvent } from '../events/kv-wire.js';
import type { HubBatch, KvEventHub } from './kv-event-hub.js';
import type { PoolEvent } from './kv-pool.js';

function wire(e: PoolEvent): WireEvent {
  switch (e.kind) {
    case 'stored':
      return { kind: 'stored', parentHash: e.parentHash === undefined ? null : String(e.parentHash), blocks: e.blocks.map((b) => ({ hash: String(b.hash), tokenIds: b.tokenIds })) };
    case 'removed':
      return { kind: 'removed', hashes: e.hashes.map(String) };
    case 'cleared':
      return { kind: 'cleared' };
  }
}

/** Publish the hub's batches from now on; returns the unsubscribe. */
export function publishHub(hub: KvEventHub, pub: NatsKvPublisher): () => void {
  return hub.subscribe((b: HubBatch) => pub.publish({ seq: b.seq, dpRank: b.dpRank, blockSize: hub.blockSize, events: b.events.map(wire) }));
}
