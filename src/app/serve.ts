// A running `portico serve`, assembled: load every model natively, assign the bare
// workers to their models, connect the workers (or start mock engines on loopback), and
// serve HTTP — on this thread (--shards 1), or on several worker threads sharing the
// port (src/shards, whose threads each build their frontend with ./frontend.ts). With
// --discovery, the workers registered in etcd join the model their record names too,
// watched from this (main) thread and applied in every shard (./discovery.ts).

import { randomUUID } from 'node:crypto';
import { checkParserNames } from './parsers.js';
import { startFrontend, type Frontend } from './frontend.js';
import { loadModels } from './natives.js';
import { startMocks } from './mocks.js';
import { assignWorkers } from './assign-workers.js';
import { loadStartupAdapters } from './adapters.js';
import type { ModelSpec, Running, ServeOptions } from './options.js';
import { serveSharded } from '../shards/supervisor.js';
import { DEFAULT_STORE_URL, parseStoreUrl } from '../store/open.js';
import { probePort } from '../http/port-guard.js';
import { localControl } from '../api/control.js';
import { prepareDiscovery } from './discovery.js';
import { natsServers } from '../events/servers.js';
import { describeTable, RateLimitOwner } from './rate-limits.js';
import { log } from '../log.js';

/** A bad --responses-store is a startup error; a memory store would be one per shard thread. */
function checkStoreUrl(o: ServeOptions): void {
  const u = parseStoreUrl(o.responsesStore?.url ?? DEFAULT_STORE_URL);
  if (u.kind === 'sqlite' && u.path === ':memory:' && (o.shards ?? 1) > 1) {
    throw new Error('--responses-store sqlite::memory: holds responses in one thread: use a file (sqlite:PATH) or postgres:// with --shards above 1');
  }
}

export async function serve(opts: ServeOptions): Promise<Running> {
  checkParserNames(opts.toolCallParser, opts.reasoningParser);
  for (const m of opts.models) checkParserNames(m.toolCallParser, m.reasoningParser, `model \`${m.name}\`: `);
  const given = (m: ModelSpec) => m.workers.length + (m.prefillWorkers?.length ?? 0) + (m.decodeWorkers?.length ?? 0);
  if (opts.workers.length + (opts.prefillWorkers?.length ?? 0) + (opts.decodeWorkers?.length ?? 0) === 0 && !opts.mock && !opts.discovery && opts.models.every((m) => given(m) === 0)) {
    throw new Error('no workers: pass --worker grpc://HOST:PORT (repeatable), --mock echo|sim or --discovery etcd://HOST:PORT');
  }
  checkStoreUrl(opts);
  const discovery = prepareDiscovery(opts);
  const o: ServeOptions = { ...(discovery?.options ?? opts) };
  if (o.eventPlane) {
    natsServers(o.eventPlane); // a bad URL is an error before anything starts
    o.replicaId ??= randomUUID();
  }
  // A taken port is an error, before anything else starts (src/http/port-guard.ts).
  if (o.httpPort !== 0) await probePort(o.host, o.httpPort);
  const models = o.models.map((m) => ({ ...m, workers: [...m.workers], prefillWorkers: [...(m.prefillWorkers ?? [])], decodeWorkers: [...(m.decodeWorkers ?? [])] }));
  await assignWorkers(models, o.workers);
  await assignWorkers(models, o.prefillWorkers ?? [], 'prefillWorkers');
  await assignWorkers(models, o.decodeWorkers ?? [], 'decodeWorkers');
  // The per-key budgets of the process (every shard's view shares them), reloadable.
  const limitsOwner = new RateLimitOwner(typeof o.apiKey === 'string' ? [o.apiKey] : [...(o.apiKey ?? [])]);
  const rateLimitShare = limitsOwner.load(o.rateLimits ?? { windowMs: 60_000, entries: [] });
  if (rateLimitShare.table.shared >= 0 || rateLimitShare.table.keys.length > 0) log.info('rate limits on', describeTable(rateLimitShare.table));
  const assigned: ServeOptions = { ...o, models, workers: [], prefillWorkers: [], decodeWorkers: [], rateLimitShare };
  if ((o.shards ?? 1) > 1) {
    const sharded = await serveSharded(assigned);
    sharded.reloadRateLimits = (config) => sharded.applyRateLimits(limitsOwner.load(config).table);
    return discovery ? discovery.start(sharded, sharded.apply) : sharded;
  }
  const natives = loadModels(assigned);
  const mocks = await startMocks(assigned, natives);
  let fe: Frontend | undefined;
  try {
    fe = await startFrontend({ ...assigned, models: mocks.models, mock: undefined }, natives);
    await loadStartupAdapters(fe.ctx, o.loras ?? []);
  } catch (err) {
    await fe?.close();
    await mocks.close();
    throw err;
  }
  const front = fe;
  const running: Running = {
    port: front.port,
    grpcPort: front.grpcPort,
    reloadRateLimits: async (config) => front.ctx.rateLimits?.apply(limitsOwner.load(config).table),
    async close() {
      await front.close();
      await mocks.close();
    },
  };
  const control = localControl(front.ctx);
  return discovery ? discovery.start(running, (c) => control.apply(c)) : running;
}
