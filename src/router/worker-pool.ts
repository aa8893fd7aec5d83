// The set of engine workers a model is served by, their health, and the choice of
// worker for each request. Health comes from each worker's HealthCheck rpc, polled;
// a worker joins the routing set once it answers healthy and leaves it when it stops.
// Between polls, what requests see counts too (reportFailure): a lost connection or a
// worker that never answered takes it out at once; failed streams only through its
// failure breaker (worker-breaker.ts), so one bad stream never takes a worker down for
// everyone. The next passing poll puts it back.
// Each worker has a role: aggregated (prefill and decode on one worker), prefill or
// decode (disaggregated serving). The configured role stands until the engine declares
// one (EngineServerInfo.disaggregation), which wins: an engine started as a prefill server
// fails any other use. A worker joins the routing set only once its engine has said (or
// failed to say), so a bare --worker that is a prefill server is never sent whole requests.
// Routers see one role's workers through a RoleView.

import type { WorkerHealthSignal } from '../engine/errors.js';
import type { EngineClient, EngineDisaggregation, EngineServerInfo } from '../engine/types.js';
import { log } from '../log.js';
import { DEFAULT_BREAKER, WorkerBreaker, type BreakerOptions } from './worker-breaker.js';

export class NoWorkerError extends Error {
  readonly apiStatus = 503;
  readonly code = 'no_worker_available';
  constructor(model: string) {
    super(`no healthy worker is available for model \`${model}\``);
  }
}

export class UnknownWorkerError extends Error {
  readonly apiStatus = 400;
  readonly code = 'unknown_worker';
  constructor(id: number, known: number[]) {
    super(`worker ${id} does not exist (this model's workers: ${known.length ? known.join(', ') : 'none'})`);
  }
}

export class WorkerDownError extends Error {
  readonly apiStatus = 503;
  readonly code = 'worker_unavailable';
  constructor(id: number) {
    super(`worker ${id} is not healthy`);
  }
}

export class WrongRoleError extends Error {
  readonly apiStatus = 400;
  readonly code = 'wrong_worker_role';
  constructor(id: number, role: WorkerRole, wanted: readonly WorkerRole[]) {
    super(`worker ${id} is a ${role} worker, not ${wanted.map((r) => `a ${r}`).join(' or ')} worker`);
  }
}

/** What a worker does in disaggregated serving: aggregated workers serve whole requests. */
export type WorkerRole = 'aggregated' | 'prefill' | 'decode';
export const WORKER_ROLES: readonly WorkerRole[] = ['aggregated', 'prefill', 'decode'];

export interface Worker {
  readonly id: number;
  readonly client: EngineClient;
  healthy: boolean;
  inflight: number;
  /** The role it serves in: the engine's declaration, else the configured role. */
  role: WorkerRole;
  /** The role it was configured with (command line, config file, registration, admin API). */
  readonly configuredRole: WorkerRole;
  /** What its engine says of disaggregation; null until its first server info (or its failure). */
  engine: EngineDisaggregation | null;
  /** Requests on it that can move elsewhere (migration): told when it leaves the pool. Null until the first. */
  runs: Set<{ evacuate(w: Worker): void }> | null;
}

export interface WorkerInfo {
  id: number;
  url: string;
  healthy: boolean;
  inflight: number;
  role: WorkerRole;
}

/** The workers a router chooses among: a pool, or one role's view of it. */
export interface WorkerSet {
  readonly model: string;
  /** Replaced (never mutated) whenever the set changes. */
  readonly workers: Worker[];
  /** The next healthy worker, round-robin. */
  pick(): Worker;
  /** A named worker (a request's pin): unknown, down and wrong-role ids throw. */
  pickById(id: number): Worker;
}

const INFO_TIMEOUT_MS = 5000;
const infos = new WeakMap<Worker, Promise<EngineServerInfo>>();

/** The worker's engine server info, asked once per worker and shared by its pool and routers. */
export function serverInfoOf(w: Worker): Promise<EngineServerInfo> {
  let p = infos.get(w);
  if (!p) infos.set(w, (p = w.client.serverInfo()));
  return p;
}

export interface WorkerPoolOptions {
  model: string;
  healthIntervalMs?: number;
  breaker?: Partial<BreakerOptions>;
  /** Worker ids shared by the pools of one frontend (several models): an id names one worker across models. */
  ids?: { next: number };
}

export class WorkerPool implements WorkerSet {
  /** The routing set. Ids are stable for a worker's life and never reused. */
  workers: Worker[];
  private readonly ids: { next: number };
  private next = 0;
  private timer: NodeJS.Timeout | null = null;
  readonly model: string;
  private readonly intervalMs: number;
  private readonly breakerOptions: BreakerOptions;
  private readonly breakers = new Map<Worker, WorkerBreaker>();
  /** Workers taken out between polls, and why (logged when they come back). */
  private readonly downSince = new Map<Worker, number>();
  private readonly rechecking = new Set<Worker>();

  constructor(clients: Array<EngineClient | { client: EngineClient; role: WorkerRole }>, opts: WorkerPoolOptions) {
    this.ids = opts.ids ?? { next: 0 };
    this.workers = clients.map((c) => ('role' in c && 'client' in c ? this.newWorker(c.client, c.role) : this.newWorker(c as EngineClient, 'aggregated')));
    this.model = opts.model;
    this.intervalMs = opts.healthIntervalMs ?? 2000;
    this.breakerOptions = { ...DEFAULT_BREAKER };
    for (const [k, v] of Object.entries(opts.breaker ?? {})) if (v !== undefined) this.breakerOptions[k as keyof BreakerOptions] = v;
  }

  /** Poll health now and then periodically; resolves after the first round. */
  async start(): Promise<void> {
    await this.pollOnce();
    this.timer = setInterval(() => void this.pollOnce(), this.intervalMs);
    this.timer.unref();
  }

  private newWorker(client: EngineClient, role: WorkerRole): Worker {
    // Every field set here, so that every worker has one shape (the router reads them per request).
    return { id: this.ids.next++, client, healthy: false, inflight: 0, role, configuredRole: role, engine: null, runs: null };
  }

  async pollOnce(): Promise<void> {
    await Promise.all(
      this.workers.map(async (w) => {
        let ok: boolean;
        try {
          ok = await w.client.health();
        } catch {
          ok = false;
        }
        if (ok && w.engine === null) await this.learnEngine(w);
        w.healthy = ok;
        if (w.healthy && this.downSince.has(w)) {
          this.downSince.delete(w);
          this.breakers.get(w)?.reset();
          log.info('worker back in rotation after a passing health check', { model: this.model, worker: w.id });
        }
      }),
    );
  }

  /** True when at least one worker is ready to take requests. */
  ready(): boolean {
    return this.workers.some((w) => w.healthy);
  }

  /** The next healthy worker, round-robin. */
  pick(): Worker {
    const n = this.workers.length;
    for (let i = 0; i < n; i++) {
      const w = this.workers[(this.next + i) % n];
      if (w.healthy) {
        this.next = (this.next + i + 1) % n;
        return w;
      }
    }
    throw new NoWorkerError(this.model);
  }

  /** A specific worker, chosen by the client (nvext backend_instance_id or its header). */
  pickById(id: number): Worker {
    const w = this.workers.find((x) => x.id === id);
    if (!w) throw new UnknownWorkerError(id, this.workers.map((x) => x.id));
    if (!w.healthy) throw new WorkerDownError(id);
    return w;
  }

  private readonly changeListeners: Array<() => void> = [];

  /** `fn` runs after each worker registers (add) or leaves (remove): a chat processor's card follows them. */
  onWorkersChanged(fn: () => void): void {
    this.changeListeners.push(fn);
  }

  private changed(): void {
    for (const fn of this.changeListeners) fn();
  }

  /** Add a worker at run time; it takes requests once its first health check passes. */
  async add(client: EngineClient, role: WorkerRole = 'aggregated'): Promise<Worker> {
    const w = this.newWorker(client, role);
    this.workers = [...this.workers, w];
    let ok: boolean;
    try {
      ok = await client.health();
    } catch {
      ok = false;
    }
    if (ok && w.engine === null) await this.learnEngine(w);
    w.healthy = ok;
    this.changed();
    return w;
  }

  /**
   * The engine's word on disaggregation (its first server info, bounded): a declared role
   * replaces the configured one. A worker that cannot say keeps its configured role.
   */
  private async learnEngine(w: Worker): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const info = await Promise.race([
        serverInfoOf(w),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no GetServerInfo answer in ${INFO_TIMEOUT_MS} ms`)), INFO_TIMEOUT_MS);
        }),
      ]);
      w.engine = info.disaggregation ?? { role: null };
    } catch (err) {
      w.engine = { role: null };
      log.debug('worker server info unavailable; its configured role stands', { model: this.model, worker: w.id, error: String(err) });
    } finally {
      clearTimeout(timer);
    }
    const declared = w.engine.role;
    if (declared === null || declared === w.role) return;
    if (w.configuredRole !== 'aggregated') log.warn(`worker ${w.id} was configured as ${w.configuredRole} but its engine serves ${declared}; it serves ${declared}`, { model: this.model, url: w.client.url });
    else log.info(`worker ${w.id} serves ${declared} (its engine says so)`, { model: this.model });
    w.role = declared;
    // A new array: role views and routers re-read the set.
    this.workers = [...this.workers];
  }

  /** This pool's workers of `roles`, as a router sees them. */
  view(roles: readonly WorkerRole[]): RoleView {
    return new RoleView(this, roles);
  }

  /** True when the model serves disaggregated: it has prefill workers (healthy or not). */
  get disaggregated(): boolean {
    return this.workers.some((w) => w.role === 'prefill');
  }

  /**
   * Take a worker out of the routing set at once. Its in-flight requests finish; its
   * connection closes when the last one ends. Returns false for an unknown id.
   */
  remove(id: number): boolean {
    const w = this.workers.find((x) => x.id === id);
    if (!w) return false;
    this.workers = this.workers.filter((x) => x !== w);
    this.breakers.delete(w);
    this.downSince.delete(w);
    // Requests that can move go on elsewhere; the others finish here.
    if (w.runs) for (const r of [...w.runs]) r.evacuate(w);
    const closeWhenIdle = () => {
      if (w.inflight > 0) setTimeout(closeWhenIdle, 50).unref();
      else w.client.close();
    };
    closeWhenIdle();
    this.changed();
    return true;
  }

  list(): WorkerInfo[] {
    return this.workers.map((w) => ({ id: w.id, url: w.client.url, healthy: w.healthy, inflight: w.inflight, role: w.role }));
  }

  /** Take a worker out of rotation until its next passing health check. */
  markDown(w: Worker, why = 'marked down'): void {
    if (w.healthy) log.warn(`worker out of rotation: ${why}`, { model: this.model, worker: w.id });
    w.healthy = false;
    this.downSince.set(w, Date.now());
  }

  /**
   * What a failed request says about its worker (EngineError.health): 'disconnected' takes
   * it out and checks its health again at once, 'down' takes it out until the next poll,
   * 'strike' counts toward its breaker, 'none' is not the worker's fault.
   */
  reportFailure(w: Worker, signal: WorkerHealthSignal): void {
    if (signal === 'none') return;
    if (signal === 'disconnected') {
      this.markDown(w, 'its connection failed');
      this.recheck(w);
      return;
    }
    if (signal === 'down') {
      this.markDown(w, 'it did not answer a request');
      return;
    }
    if (this.breakerOf(w).failure(Date.now())) this.markDown(w, 'its failure breaker opened');
  }

  /** A request the worker completed (closes the breaker's run of failures). */
  reportSuccess(w: Worker): void {
    const b = this.breakers.get(w);
    if (b) b.success(Date.now());
  }

  /** One health check of `w` now (at most one at a time per worker); a pass puts it back. */
  private recheck(w: Worker): void {
    if (this.rechecking.has(w)) return;
    this.rechecking.add(w);
    void w.client
      .health()
      .catch(() => false)
      .then((ok) => {
        this.rechecking.delete(w);
        if (!ok || w.healthy || !this.workers.includes(w)) return;
        w.healthy = true;
        this.downSince.delete(w);
        this.breakers.get(w)?.reset();
        log.info('worker back in rotation: it reconnected and its health check passed', { model: this.model, worker: w.id });
      });
  }

  private breakerOf(w: Worker): WorkerBreaker {
    let b = this.breakers.get(w);
    if (!b) this.breakers.set(w, (b = new WorkerBreaker(this.breakerOptions)));
    return b;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const w of this.workers) w.client.close();
  }
}

/**
 * One or more roles' workers of a pool: what a router of that pool chooses among. Follows
 * the pool (its array is replaced on every change, a role change included); a pinned id of
 * another role is a 400 naming the role.
 */
export class RoleView implements WorkerSet {
  private seen: Worker[] | null = null;
  private list: Worker[] = [];
  private next = 0;

  constructor(
    readonly pool: WorkerPool,
    readonly roles: readonly WorkerRole[],
  ) {}

  get model(): string {
    return this.pool.model;
  }

  get workers(): Worker[] {
    const all = this.pool.workers;
    if (all !== this.seen) {
      this.seen = all;
      this.list = all.filter((w) => this.roles.includes(w.role));
    }
    return this.list;
  }

  pick(): Worker {
    const ws = this.workers;
    const n = ws.length;
    for (let i = 0; i < n; i++) {
      const w = ws[(this.next + i) % n]!;
      if (w.healthy) {
        this.next = (this.next + i + 1) % n;
        return w;
      }
    }
    throw new NoWorkerError(this.model);
  }

  pickById(id: number): Worker {
    const w = this.pool.workers.find((x) => x.id === id);
    if (!w) throw new UnknownWorkerError(id, this.workers.map((x) => x.id));
    if (!this.roles.includes(w.role)) throw new WrongRoleError(id, w.role, this.roles);
    if (!w.healthy) throw new WorkerDownError(id);
    return w;
  }
}
