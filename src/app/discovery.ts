// --discovery for `portico serve`: the shared status every shard reports on /health and
// /metrics, and the etcd watcher (main thread) whose changes join and remove workers
// (each to the served model its record names; a name not served is ignored and counted).
// etcd unreachable at start is a startup error (the server that was started is closed).

import { etcdEndpoints } from '../discovery/endpoints.js';
import { DiscoveryStatus } from '../discovery/status.js';
import { EtcdWorkerWatcher } from '../discovery/watcher.js';
import { discoveredWorkers, type ApplyChange } from './discovered-workers.js';
import type { Running, ServeOptions } from './options.js';

export interface PreparedDiscovery {
  /** The options with the status buffer the shards read. */
  options: ServeOptions;
  /** Watch etcd and apply its workers to the running server; closing it stops the watch first. */
  start(running: Running, apply: ApplyChange): Promise<Running>;
}

export function prepareDiscovery(o: ServeOptions): PreparedDiscovery | null {
  if (!o.discovery) return null;
  const endpoints = etcdEndpoints(o.discovery);
  const status = new DiscoveryStatus();
  const options: ServeOptions = { ...o, discoveryStatus: status.buffer };
  return {
    options,
    async start(running, apply) {
      const watcher = new EtcdWorkerWatcher({
        endpoints,
        namespace: o.namespace ?? 'portico',
        status,
        onChange: discoveredWorkers(new Set(o.models.map((m) => m.name)), apply, status),
      });
      try {
        await watcher.start();
      } catch (err) {
        await running.close();
        throw err;
      }
      return {
        port: running.port,
        grpcPort: running.grpcPort,
        reloadRateLimits: running.reloadRateLimits,
        async close() {
          await watcher.close();
          await running.close();
        },
      };
    },
  };
}
