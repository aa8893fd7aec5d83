// Whether a failure is the worker's (the request may go on elsewhere: migration.ts) or the request's.

import { EngineError } from '../engine/errors.js';

/** Why a request moved, for the metric. */
export type MigrationReason = 'disconnected' | 'down' | 'strike' | 'handoff' | 'worker_removed';

/** A failure that is the worker's, not the request's: what the transport said of the worker. */
export function workerFault(err: unknown): MigrationReason | null {
  if (err instanceof EngineError) return err.health === 'none' ? null : err.health;
  if ((err as { workerFault?: unknown } | null)?.workerFault === true) return 'handoff';
  return null;
}

/** Marks a client-facing error as the workers' fault (a failed prefill leg, a KV hand-off that never came). */
export function asWorkerFault<E extends Error>(err: E): E {
  return Object.assign(err, { workerFault: true });
}
