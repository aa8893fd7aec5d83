// The set of engine workers a model is served by, their health, and the choice of
// worker for each request. Health comes from each worker's HealthCheck rpc, polled;
// a worker joins the routing set once it answers healthy and leaves it when it stops.
// Between polls, what requests see counts too (reportFailure): a lost connection or a
// worker that never answered takes it out at once; failed streams only through its
// failure breaker (worker-breaker.ts), so one bad stream never takes a worker down for
// everyone. The next passing poll puts it back.
// The choice is round-robin over healthy workers (a later change adds KV-aware routing).

import type { WorkerHealthSignal } from '../engine/errors.js';
import type { EngineClient } from '../engine/types.js';
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

export interface Worker {
  readonly id: number;
  readonly client: EngineClient;
  healthy: boolean;
  inflight: number;
}

export interface WorkerInfo {
  id: number;
  url: string;
  healthy: boolean;
  inflight: number;
}

export interface WorkerPoolOptions {
  model: string;
  healthIntervalMs?: number;
  breaker?: Partial<BreakerOptions>;
  /** Worker ids shared by the pools of one frontend (several models): an id names one worker across models. */
  ids?: { next: number };
}

export class WorkerPool {
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

  constructor(clients: EngineClient[], opts: WorkerPoolOptions) {
    this.ids = opts.ids ?? { next: 0 };
    this.workers = clients.map((client) => ({ id: this.ids.next++, client, healthy: false, inflight: 0 }));
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

  async pollOnce(): Promise<void> {
    await Promise.all(
      this.workers.map(async (w) => {
        try {
          w.healthy = await w.client.health();
        } catch {
          w.healthy = false;
        }
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
  async add(client: EngineClient): Promise<Worker> {
    const w: Worker = { id: this.ids.next++, client, healthy: false, inflight: 0 };
    this.workers = [...this.workers, w];
    try {
      w.healthy = await client.health();
    } catch {
      w.healthy = false;
    }
    this.changed();
    return w;
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
    const closeWhenIdle = () => {
      if (w.inflight > 0) setTimeout(closeWhenIdle, 50).unref();
      else w.client.close();
    };
    closeWhenIdle();
    this.changed();
    return true;
  }

  list(): WorkerInfo[] {
    return this.workers.map((w) => ({ id: w.id, url: w.client.url, healthy: w.healthy, inflight: w.inflight }));
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
