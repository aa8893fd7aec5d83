// The set of engine workers a model is served by, their health, and the choice of
// worker for each request. Health comes from each worker's HealthCheck rpc, polled;
// a worker joins the routing set once it answers healthy and leaves it when it stops.
// The choice is round-robin over healthy workers (a later change adds KV-aware routing).

import type { EngineClient } from '../engine/types.js';

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
}

export class WorkerPool {
  /** The routing set. Ids are stable for a worker's life and never reused. */
  workers: Worker[];
  private nextId: number;
  private next = 0;
  private timer: NodeJS.Timeout | null = null;
  readonly model: string;
  private readonly intervalMs: number;

  constructor(clients: EngineClient[], opts: WorkerPoolOptions) {
    this.workers = clients.map((client, id) => ({ id, client, healthy: false, inflight: 0 }));
    this.nextId = clients.length;
    this.model = opts.model;
    this.intervalMs = opts.healthIntervalMs ?? 2000;
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

  /** Add a worker at run time; it takes requests once its first health check passes. */
  async add(client: EngineClient): Promise<Worker> {
    const w: Worker = { id: this.nextId++, client, healthy: false, inflight: 0 };
    this.workers = [...this.workers, w];
    try {
      w.healthy = await client.health();
    } catch {
      w.healthy = false;
    }
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
    const closeWhenIdle = () => {
      if (w.inflight > 0) setTimeout(closeWhenIdle, 50).unref();
      else w.client.close();
    };
    closeWhenIdle();
    return true;
  }

  list(): WorkerInfo[] {
    return this.workers.map((w) => ({ id: w.id, url: w.client.url, healthy: w.healthy, inflight: w.inflight }));
  }

  /** Mark a worker down after a transport failure, until its next healthy poll. */
  markDown(w: Worker): void {
    w.healthy = false;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const w of this.workers) w.client.close();
  }
}
