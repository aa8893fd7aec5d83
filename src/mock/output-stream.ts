// Bridge from the simulator's callbacks to a gRPC handler's async iteration.
// Outputs queued while the handler was busy writing come out together, and
// consecutive token outputs of one choice are merged: a slow reader gets
// several tokens per message instead of a growing backlog.

import type { CoreOutput, CoreRequest, SimCore } from './sim-core.js';

export interface StreamStats {
  generates: number;
  /** Requests the engine stopped because it was told to (Abort rpc or a cancelled stream). */
  aborts: number;
  /** Abort rpcs received, whether or not the request was still running. */
  abortRpcs: number;
  active: number;
}

/**
 * Run `req` on `core` and yield its outputs in batches. When `signal` fires
 * (the caller went away) the request is aborted and iteration just stops.
 */
export async function* runRequest(
  core: SimCore, req: CoreRequest, signal: AbortSignal, stats: StreamStats, merge = true, streamInterval = 1,
): AsyncGenerator<CoreOutput[]> {
  const held = new Map<number, CoreOutput>();
  let queue: CoreOutput[] = [];
  let wake: (() => void) | undefined;
  let open = Math.max(1, req.n);
  const emit = (o: CoreOutput) => {
    queue.push(o);
    if (o.kind === 'finish') open--;
    const w = wake;
    wake = undefined;
    w?.();
  };
  let cancelled = false;
  const onCancel = () => {
    cancelled = true;
    if (core.abort(req.id)) stats.aborts++;
    const w = wake;
    wake = undefined;
    w?.();
  };
  core.submit(req, emit);
  stats.active++;
  signal.addEventListener('abort', onCancel, { once: true });
  try {
    for (;;) {
      // Cancelled: what the abort queued (choices ending "abort") reaches no one.
      if (cancelled) return;
      if (queue.length === 0) {
        if (open === 0 || cancelled) return;
        await new Promise<void>((r) => (wake = r));
        if (cancelled) return;
        continue;
      }
      if (merge) {
        const batch = coalesce(queue);
        queue = [];
        const out = streamInterval > 1 ? hold(batch, held, streamInterval) : batch;
        if (out.length) yield out;
      } else {
        yield [queue.shift()!];
      }
    }
  } finally {
    signal.removeEventListener('abort', onCancel);
    stats.active--;
    if (core.has(req.id)) {
      // The handler stopped early (write failed, stream reset).
      if (core.abort(req.id)) stats.aborts++;
    }
  }
}

// Keep a choice's tokens back until `interval` of them are ready (or it ends),
// as vLLM's --stream-interval does.
function hold(batch: CoreOutput[], held: Map<number, CoreOutput>, interval: number): CoreOutput[] {
  const out: CoreOutput[] = [];
  for (const o of batch) {
    const h = held.get(o.index);
    if (o.kind === 'tokens') {
      const merged = h?.kind === 'tokens' ? { ...o, tokenIds: [...h.tokenIds, ...o.tokenIds] } : o;
      if (merged.tokenIds.length >= interval) {
        held.delete(o.index);
        out.push(merged);
      } else held.set(o.index, merged);
    } else {
      if (h) out.push(h);
      held.delete(o.index);
      out.push(o);
    }
  }
  return out;
}

function coalesce(list: CoreOutput[]): CoreOutput[] {
  const out: CoreOutput[] = [];
  for (const o of list) {
    const prev = out.at(-1);
    if (o.kind === 'tokens' && prev?.kind === 'tokens' && prev.index === o.index) {
      out[out.length - 1] = { ...o, tokenIds: [...prev.tokenIds, ...o.tokenIds] };
    } else out.push(o);
  }
  return out;
}
