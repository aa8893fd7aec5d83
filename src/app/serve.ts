// A running `portico serve`, assembled: load the model natively, connect its workers
// (or start mock engines on loopback), and serve HTTP — on this thread (--shards 1), or
// on several worker threads sharing the port (src/shards, whose threads each build their
// frontend with ./frontend.ts). With --discovery, the workers registered in etcd join
// too, watched from this (main) thread and applied in every shard (./discovery.ts).

import { resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Model } from '../native/core.js';
import { checkParserNames } from './parsers.js';
import { startFrontend } from './frontend.js';
import { startMocks } from './mocks.js';
import type { Running, ServeOptions } from './options.js';
import { serveSharded } from '../shards/supervisor.js';
import { probePort } from '../http/port-guard.js';
import { localControl } from '../api/control.js';
import { prepareDiscovery } from './discovery.js';
import { natsServers } from '../events/servers.js';

export async function serve(opts: ServeOptions): Promise<Running> {
  checkParserNames(opts.toolCallParser, opts.reasoningParser);
  if (opts.workers.length === 0 && !opts.mock && !opts.discovery) {
    throw new Error('no workers: pass --worker grpc://HOST:PORT (repeatable), --mock echo|sim or --discovery etcd://HOST:PORT');
  }
  const discovery = prepareDiscovery(opts);
  const o = { ...(discovery?.options ?? opts) };
  if (o.eventPlane) {
    natsServers(o.eventPlane); // a bad URL is an error before anything starts
    o.replicaId ??= randomUUID();
  }
  // A taken port is an error, before anything else starts (src/http/port-guard.ts).
  if (o.httpPort !== 0) await probePort(o.host, o.httpPort);
  if ((o.shards ?? 1) > 1) {
    const sharded = await serveSharded(o);
    return discovery ? discovery.start(sharded, sharded.apply) : sharded;
  }
  const native = Model.load(resolve(o.modelPath));
  const mocks = await startMocks(o, native);
  let fe;
  try {
    fe = await startFrontend(o, [...o.workers, ...mocks.urls], native);
  } catch (err) {
    await mocks.close();
    throw err;
  }
  const running: Running = {
    port: fe.port,
    async close() {
      await fe.close();
      await mocks.close();
    },
  };
  const control = localControl(fe.ctx);
  return discovery ? discovery.start(running, (c) => control.apply(c)) : running;
}
