// What the main thread and the shard threads say to each other (over each Worker's
// port; every message is structured-cloneable).
//
// Requests carry an id chosen by the asker; the answer repeats it.
//   shard → main: 'control' (relay a change to every shard), 'collect' (every shard's metrics)
//   main → shard: 'apply' (apply a change here), 'snapshot' (this shard's metrics),
//                 'rate-limits' (apply reloaded per-key limits; answered 'limits-applied')
//
// Shutdown: main → shard 'drain'; the shard stops listening, lets in-flight requests
// finish (--shutdown-timeout-secs), aborts the rest and answers 'drained'; its thread
// then ends by itself once its last connection has closed.

import type { ControlChange, ControlReply } from '../api/control-change.js';
import type { FamilySnapshot } from '../metrics/snapshot.js';
import type { ServeOptions } from '../app/options.js';
import type { SharedRouterState } from '../app/frontend.js';
import type { SlotTable } from '../limits/key-limits.js';

/** A shard thread's workerData. */
export interface ShardData {
  shard: number;
  /** Workers are the real ones plus the main thread's mock engines; no --mock here. */
  options: ServeOptions;
  /** Per model, the router state every shard shares. */
  models: SharedRouterState[];
  /** One Int32: generations admitted across every shard (--max-concurrent-requests is one limit for the process). */
  admitted: SharedArrayBuffer;
}

export type ToMain =
  | { t: 'listening'; port: number; grpcPort?: number }
  | { t: 'failed'; error: string }
  | { t: 'crashed'; error: string }
  | { t: 'drained' }
  | { t: 'control'; id: number; change: ControlChange }
  | { t: 'collect'; id: number }
  | { t: 'applied'; id: number; reply: ControlReply }
  | { t: 'snapshot'; id: number; families: FamilySnapshot[] }
  | { t: 'limits-applied'; id: number };

export type ToShard =
  | { t: 'drain' }
  /** Apply reloaded per-key rate limits (the main thread rebased the shared budgets first); answered 'limits-applied'. */
  | { t: 'rate-limits'; id: number; table: SlotTable }
  | { t: 'apply'; id: number; change: ControlChange }
  | { t: 'snapshot'; id: number }
  | { t: 'controlled'; id: number; reply: ControlReply }
  | { t: 'collected'; id: number; snapshots: FamilySnapshot[][] };
