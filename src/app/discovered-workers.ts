// Workers found through etcd, joined to (and removed from) the served model their record
// names, through the same control-plane change /admin/workers (and addWorkerToModel in
// src/api/control.ts) makes, so every server shard applies it.
// A URL registered under several keys (a registrant that re-made its lease before the
// old key expired) is one worker, removed when its last key goes. A worker that was
// already serving (--worker) is left alone when its key goes.

import type { ControlChange, ControlReply } from '../api/control-change.js';
import { canonicalWorkerUrl } from '../api/worker-url.js';
import { log } from '../log.js';
import type { DiscoveryStatus } from '../discovery/status.js';
import type { WorkerChange } from '../discovery/watcher.js';
import type { WorkerRole } from '../router/worker-pool.js';

export type ApplyChange = (c: ControlChange) => Promise<ControlReply>;

/**
 * Join the worker at `url` to model `model`: the worker id, or null when it was already
 * serving it (not ours to remove). Throws with the reason when it cannot join.
 * (The one place that knows how a discovered worker joins a model: the change names it.)
 */
export async function joinWorker(apply: ApplyChange, model: string, url: string, role: WorkerRole = 'aggregated'): Promise<number | null> {
  const r = await apply({ op: 'add-worker', url, model, role });
  if (r.ok) return (JSON.parse(r.body) as { worker: { id: number } }).worker.id;
  if (r.status === 409) return null;
  throw new Error(r.message);
}

interface Joined {
  id: number | null;
  keys: Set<string>;
}

/** The watcher's change handler for a frontend serving `served`. */
export function discoveredWorkers(served: ReadonlySet<string>, apply: ApplyChange, status: DiscoveryStatus): (c: WorkerChange) => Promise<void> {
  const byUrl = new Map<string, Joined>();
  return async (c) => {
    const { model } = c.record;
    if (!served.has(model)) {
      if (c.type === 'put') {
        status.countIgnored();
        log.info('discovered a worker of a model this frontend does not serve; ignored', { model, key: c.key });
      }
      return;
    }
    let url: string;
    try {
      url = canonicalWorkerUrl(c.record.url);
    } catch (err) {
      if (c.type === 'put') {
        status.countInvalid();
        log.warn('discovered worker has an invalid URL; ignored', { key: c.key, why: (err as Error).message });
      }
      return;
    }
    const j = byUrl.get(url);
    if (c.type === 'put') {
      if (j) {
        j.keys.add(c.key);
        return;
      }
      try {
        const id = await joinWorker(apply, model, url, c.record.role);
        byUrl.set(url, { id, keys: new Set([c.key]) });
        log.info('discovered worker joined', { model, worker: id ?? 'already serving', key: c.key });
      } catch (err) {
        log.warn('discovered worker could not join', { model, key: c.key, error: (err as Error).message });
      }
      return;
    }
    if (!j || !j.keys.delete(c.key) || j.keys.size > 0) return;
    byUrl.delete(url);
    if (j.id === null) return;
    const r = await apply({ op: 'remove-worker', id: j.id });
    log.info('discovered worker left (its lease ended)', { model, worker: j.id, removed: r.ok });
  };
}
