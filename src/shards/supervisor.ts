// `portico serve --shards N` on the main thread: start the mock engines once, make
// the shared load table, start N shard threads on one port (the kernel spreads
// connections over them: uSockets listens with SO_REUSEPORT on Linux), relay
// control-plane changes and metric collection between shards, and drain them all on
// shutdown. The main thread serves no HTTP itself.
//
// A shard that crashes is logged and the whole server drains and exits with status 1
// (a supervisor restarts it): a shard restarted in place would leave the load of its
// lost requests in the shared table, skewing every later routing decision.

import { Worker } from 'node:worker_threads';
import { log } from '../log.js';
import { startMocks } from '../app/mocks.js';
import type { Running, ServeOptions } from '../app/options.js';
import type { ControlChange, ControlReply } from '../api/control-change.js';
import type { FamilySnapshot } from '../metrics/snapshot.js';
import { LoadTable } from '../router/load-table.js';
import { SharedSessionAffinity } from '../router/shared-session-affinity.js';
import { DEFAULT_ROUTER_OPTIONS } from '../router/options.js';
import type { ShardData, ToMain, ToShard } from './messages.js';
import { assertSoleListener, freePort } from '../http/port-guard.js';
import type { SlotTable } from '../limits/key-limits.js';

/** How long /metrics waits for a shard's values before leaving that shard out. */
const SNAPSHOT_TIMEOUT_MS = 2000;

class Shard {
  readonly worker: Worker;
  private seq = 0;
  private readonly waiting = new Map<number, (m: ToMain | null) => void>();
  exited = false;
  readonly exit: Promise<number>;

  constructor(
    readonly id: number,
    data: ShardData,
    onMessage: (s: Shard, m: ToMain) => void,
  ) {
    this.worker = new Worker(new URL('./shard-thread.js', import.meta.url), { workerData: data, name: `portico-shard-${id}` });
    this.worker.on('error', (err) => log.error('shard thread error', { shard: id, error: String(err) }));
    this.worker.on('message', (m: ToMain) => {
      if ((m.t === 'applied' || m.t === 'snapshot' || m.t === 'limits-applied') && this.waiting.has(m.id)) {
        const done = this.waiting.get(m.id)!;
        this.waiting.delete(m.id);
        done(m);
        return;
      }
      onMessage(this, m);
    });
    this.exit = new Promise((done) =>
      this.worker.once('exit', (code) => {
        this.exited = true;
        for (const w of this.waiting.values()) w(null);
        this.waiting.clear();
        done(code);
      }),
    );
  }

  post(m: ToShard): void {
    if (!this.exited) this.worker.postMessage(m);
  }

  /** Ask and wait for the answer (null if the shard is gone or too slow). */
  ask(m: { t: 'apply'; change: ControlChange } | { t: 'snapshot' } | { t: 'rate-limits'; table: SlotTable }, timeoutMs = 0): Promise<ToMain | null> {
    if (this.exited) return Promise.resolve(null);
    const id = ++this.seq;
    return new Promise((done) => {
      let timer: NodeJS.Timeout | null = null;
      this.waiting.set(id, (r) => {
        if (timer) clearTimeout(timer);
        done(r);
      });
      if (timeoutMs > 0) {
        timer = setTimeout(() => {
          this.waiting.delete(id);
          done(null);
        }, timeoutMs);
      }
      this.worker.postMessage({ ...m, id } as ToShard);
    });
  }
}

/** A sharded server, and how the main thread applies a control change in every shard. */
export interface ShardedServer extends Running {
  apply(change: ControlChange): Promise<ControlReply>;
  /** Every shard applies this rate-limit table (the budgets are shared already); resolves once all have. */
  applyRateLimits(table: SlotTable): Promise<void>;
}

export async function serveSharded(o: ServeOptions): Promise<ShardedServer> {
  const count = o.shards!;
  const mocks = await startMocks(o);
  const maxWorkers = o.router?.maxWorkers ?? DEFAULT_ROUTER_OPTIONS.maxWorkers;
  // Per model, in serving order: the router state every shard shares.
  const models = o.models.map(() => ({
    load: new LoadTable(maxWorkers).buffer,
    queueDepth: new SharedArrayBuffer(4),
    sessions: SharedSessionAffinity.buffer(),
    prefillLoad: new LoadTable(maxWorkers).buffer,
    prefillQueueDepth: new SharedArrayBuffer(4),
  }));
  const admitted = new SharedArrayBuffer(4);
  const base: ServeOptions = { ...o, models: mocks.models, workers: [], mock: undefined, mockWorkers: 0, shards: 1 };
  const shards: Shard[] = [];
  let closing: Promise<void> | null = null;
  let controlChain: Promise<void> = Promise.resolve();

  // One change at a time, applied by every shard before the next: worker ids and
  // load-table slots then follow the same sequence everywhere. The reply is the asking
  // shard's (shard 0's for a change from the main thread: discovery).
  const broadcast = (change: ControlChange, from: Shard | null): Promise<ControlReply> => {
    const done = controlChain.then(async () => {
      const replies = await Promise.all(shards.map((x) => x.ask({ t: 'apply', change })));
      const own = replies[from?.id ?? 0] as Extract<ToMain, { t: 'applied' }> | null;
      const reply: ControlReply = own?.reply ?? { ok: false, status: 503, message: 'the server is shutting down', type: 'service_unavailable', code: 'shutting_down', param: null };
      // Outcomes (not bodies: a new worker's first health check may differ) must agree.
      for (const r of replies) {
        const other = (r as Extract<ToMain, { t: 'applied' }> | null)?.reply;
        if (other && (other.ok !== reply.ok || other.status !== reply.status)) {
          log.warn('shards disagree on a control change', { change, shard: from?.id ?? 'main', status: reply.status, other: other.status });
          break;
        }
      }
      return reply;
    });
    controlChain = done.then(() => {});
    return done;
  };

  const onMessage = (s: Shard, m: ToMain) => {
    switch (m.t) {
      case 'control':
        void broadcast(m.change, s).then((reply) => s.post({ t: 'controlled', id: m.id, reply }));
        break;
      case 'collect':
        void Promise.all(shards.map((x) => x.ask({ t: 'snapshot' }, SNAPSHOT_TIMEOUT_MS))).then((all) => {
          const snapshots: FamilySnapshot[][] = [];
          for (const r of all) if (r && r.t === 'snapshot') snapshots.push(r.families);
          s.post({ t: 'collected', id: m.id, snapshots });
        });
        break;
      case 'crashed':
        fatal(`shard ${s.id} crashed: ${m.error}`);
        break;
      case 'drained':
        log.info('shard drained; its thread ends when its idle keep-alive connections close (by their clients, or by uWS after 10 s idle)', { shard: s.id });
        break;
      default:
        break;
    }
  };

  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const s of shards) s.post({ t: 'drain' });
      // Each shard's thread ends by itself once its last connection is closed (see
      // 'drained' above). Never worker.terminate() or process.exit() before that: a
      // thread ended with a uWS socket still open aborts the process (Node checks that
      // the thread's event loop has no open handles left).
      await Promise.all(shards.map((s) => s.exit));
      await mocks.close();
    })();
    return closing;
  };

  const fatal = (why: string) => {
    if (closing) return;
    log.error(`${why}; draining the other shards and exiting`);
    void close().then(() => process.exit(1));
  };

  let grpcPort: number | undefined;
  const start = (id: number, httpPort: number): Promise<number> => {
    const s = new Shard(id, { shard: id, options: { ...base, httpPort }, models, admitted }, onMessage);
    shards[id] = s;
    return new Promise((done, fail) => {
      const onStart = (m: ToMain) => {
        if (m.t === 'listening') {
          if (m.grpcPort !== undefined) grpcPort = m.grpcPort; // shard 0 serves KServe gRPC
          done(m.port);
        }
        else if (m.t === 'failed') fail(new Error(`shard ${id} did not start: ${m.error}`));
        else return;
        s.worker.off('message', onStart);
      };
      s.worker.on('message', onStart);
      s.worker.once('error', (err) => fail(err));
      void s.exit.then((code) => {
        fail(new Error(`shard ${id} exited with ${code} while starting`));
        if (!closing) fatal(`shard ${id} exited with status ${code}`);
      });
    });
  };

  try {
    // uSockets sets SO_REUSEPORT only on a named port (not on port 0): with --http-port 0,
    // find a free port first, then every shard listens on it.
    const port = o.httpPort === 0 ? await freePort(o.host) : o.httpPort;
    await Promise.all(Array.from({ length: count }, (_, i) => start(i, port)));
    // The shards listen with SO_REUSEPORT: make sure no other process joined them on the
    // port between the probe (serve.ts) and their listen (src/http/port-guard.ts).
    assertSoleListener(o.host, port);
    log.info(`serving on ${count} shards`, { shards: count });
    const applyRateLimits = async (table: SlotTable) => {
      await Promise.all(shards.map((s) => s.ask({ t: 'rate-limits', table })));
    };
    return { port, grpcPort, close, apply: (change) => broadcast(change, null), applyRateLimits };
  } catch (err) {
    await close();
    throw err;
  }
}

