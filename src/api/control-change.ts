// Control-plane changes (worker registry, busy thresholds, LoRA adapters) as data: what an endpoint
// hands to a ControlPlane, and the structured-cloneable reply. The types alone, so that
// the context (./context.ts) can name a ControlPlane without importing how changes are
// applied (./control.ts).

import type { ErrorType } from '../protocol/errors.js';

import type { WorkerRole } from '../router/worker-pool.js';

export type ControlChange =
  | { op: 'add-worker'; url: string; model?: unknown; role?: WorkerRole }
  | { op: 'remove-worker'; id: number }
  | { op: 'set-thresholds'; model?: unknown; activeDecodeBlocks?: number | null; activePrefillTokens?: number | null }
  /** A LoRA adapter the engines have loaded: serve it (./adapters.ts). */
  | { op: 'add-adapter'; name: string; path: string; base: string }
  | { op: 'remove-adapter'; name: string };

/** A change's outcome, structured-cloneable: the JSON answer, or the error to answer with. */
export type ControlReply =
  | { ok: true; status: number; body: string }
  | { ok: false; status: number; message: string; type: ErrorType; code: string | null; param: string | null };

export interface ControlPlane {
  apply(change: ControlChange): Promise<ControlReply>;
}
