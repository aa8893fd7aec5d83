// A shard: one worker thread running a whole frontend (uWS app on the shared port,
// gate, tokenizer, router, engine clients). What must agree across shards goes
// through the main thread: worker and threshold changes (applied here when the main
// thread says 'apply', in the same order everywhere) and /metrics (every shard's
// values). The router's load table is a SharedArrayBuffer from the main thread.

import { parentPort, workerData } from 'node:worker_threads';
import { configureLog, log } from '../log.js';
import { startFrontend, type Frontend } from '../app/frontend.js';
import { loadModels } from '../app/natives.js';
import { loadStartupAdapters } from '../app/adapters.js';
import { applyChange } from '../api/control.js';
import type { ControlPlane } from '../api/control-change.js';
import type { ShardLink } from '../api/context.js';
import { scrapeGauges } from '../api/metrics.js';
import type { ShardData, ToMain, ToShard } from './messages.js';

const port = parentPort!;
const data = workerData as ShardData;
const o = data.options;
if (o.log) configureLog(o.log);

const post = (m: ToMain) => port.postMessage(m);
const waiting = new Map<number, (m: ToShard) => void>();
let seq = 0;

function ask(m: { t: 'control' | 'collect' } & Record<string, unknown>): Promise<ToShard> {
  const id = ++seq;
  return new Promise((done) => {
    waiting.set(id, done);
    post({ ...m, id } as ToMain);
  });
}

const link: ShardLink = {
  id: data.shard,
  collectMetrics: async () => ((await ask({ t: 'collect' })) as Extract<ToShard, { t: 'collected' }>).snapshots,
};
const control: ControlPlane = {
  apply: async (change) => ((await ask({ t: 'control', change })) as Extract<ToShard, { t: 'controlled' }>).reply,
};

// An error nothing caught: tell the main thread (which drains every shard and exits
// non-zero) instead of letting the thread die with its sockets open.
process.on('uncaughtException', (err) => {
  log.error('shard crashed', { shard: data.shard, error: String(err), stack: err instanceof Error ? err.stack : undefined });
  post({ t: 'crashed', error: String(err) });
});

let fe: Frontend;
try {
  fe = await startFrontend(o, loadModels(o), { link, control, models: data.models, admitted: data.admitted });
  // Each shard registers the startup adapters itself (the engines load each once: src/api/adapters.ts).
  await loadStartupAdapters(fe.ctx, o.loras ?? []);
} catch (err) {
  post({ t: 'failed', error: (err as Error).message });
  port.close();
  throw err;
}
const refresh = scrapeGauges(fe.ctx);

port.on('message', (m: ToShard) => {
  switch (m.t) {
    case 'controlled':
    case 'collected': {
      const done = waiting.get(m.id);
      waiting.delete(m.id);
      done?.(m);
      break;
    }
    case 'apply':
      void applyChange(fe.ctx, m.change).then((reply) => post({ t: 'applied', id: m.id, reply }));
      break;
    case 'rate-limits':
      fe.ctx.rateLimits?.apply(m.table);
      post({ t: 'limits-applied', id: m.id });
      break;
    case 'snapshot':
      refresh();
      post({ t: 'snapshot', id: m.id, families: fe.ctx.metrics.registry.snapshot() });
      break;
    case 'drain':
      // Stop listening, finish or abort in-flight requests, then say so. No uWS App.close()
      // (called after a burst of requests it aborts the process with std::bad_alloc),
      // and nothing may end this thread while a socket is open: the thread ends
      // by itself once its idle keep-alive connections close (by their clients, or by uWS
      // after 10 s idle); until then they are answered (503 shutting_down). The port no
      // longer keeps the thread alive, but still carries messages while it lives.
      void fe
        .close()
        .catch((err: unknown) => log.error('shard drain failed', { shard: data.shard, error: String(err) }))
        .then(() => {
          post({ t: 'drained' });
          port.unref();
        });
      break;
  }
});
post({ t: 'listening', port: fe.port, grpcPort: fe.grpcPort });
