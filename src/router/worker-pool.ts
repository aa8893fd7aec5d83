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
  constructor(id: number, known: number) {
    super(`worker ${id} does not exist (this model has workers 0 to ${known - 1})`);
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

export interface WorkerPoolOptions {
  model: string;
  healthIntervalMs?: number;
}

export class WorkerPool {
  readonly workers: Worker[];
  private next = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly model: string;
  private readonly intervalMs: number;

  constructor(clients: EngineClient[], opts: WorkerPoolOptions) {
    this.workers = clients.map((client, id) => ({ id, client, healthy: false, inflight: 0 }));
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
    const w = this.workers[id];
    if (!w) throw new UnknownWorkerError(id, this.workers.length);
    if (!w.healthy) throw new WorkerDownError(id);
    return w;
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
