// A running `portico serve`, assembled: load the model natively, connect its workers
// (or start mock engines on loopback), and serve HTTP — on this thread (--shards 1), or
// on several worker threads sharing the port (src/shards, whose threads each build their
// frontend with ./frontend.ts).

import { loadModel } from './chat-template.js';
import { checkParserNames } from './parsers.js';
import { startFrontend } from './frontend.js';
import { startMocks } from './mocks.js';
import type { Running, ServeOptions } from './options.js';
import { serveSharded } from '../shards/supervisor.js';
import { probePort } from '../http/port-guard.js';

export async function serve(o: ServeOptions): Promise<Running> {
  checkParserNames(o.toolCallParser, o.reasoningParser);
  if (o.workers.length === 0 && !o.mock) {
    throw new Error('no workers: pass --worker grpc://HOST:PORT (repeatable) or --mock echo|sim');
  }
  // A taken port is an error, before anything else starts (src/http/port-guard.ts).
  if (o.httpPort !== 0) await probePort(o.host, o.httpPort);
  if ((o.shards ?? 1) > 1) return serveSharded(o);
  const native = loadModel(o);
  const mocks = await startMocks(o, native);
  let fe;
  try {
    fe = await startFrontend(o, [...o.workers, ...mocks.urls], native);
  } catch (err) {
    await mocks.close();
    throw err;
  }
  return {
    port: fe.port,
    grpcPort: fe.grpcPort,
    async close() {
      await fe.close();
      await mocks.close();
    },
  };
}

