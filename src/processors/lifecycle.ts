// One model's processor engine over its life (spec 002): built by the factory when the
// model's first worker registers, rebuilt when its card changes (a worker that registers
// with another runtime config), retried with backoff while the factory throws. Requests
// that arrive before the first build succeeds get a 503 (model not ready) with Retry-After.

import { log } from '../log.js';
import { ApiError } from '../protocol/errors.js';
import type { ServedModel } from '../pipeline/served-model.js';
import type { Worker } from '../router/worker-pool.js';
import type { ChatEngine, ChatEngineFactory } from './contract.js';
import { cardKey, modelCard, runtimeConfigOf } from './model-card.js';
import { routedEngineFor } from './routed-engine.js';

export interface Backoff {
  /** First retry delay (ms); doubled after each failure up to maxMs. */
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 250, maxMs: 10_000 };

/** How long a worker's GetModelInfo may take before the build tries again. */
const MODEL_INFO_TIMEOUT_MS = 5000;

export class ProcessorSlot {
  private engine: ChatEngine | null = null;
  /** The card the current engine was built for. */
  private builtKey: string | null = null;
  private building = false;
  /** A worker change arrived while building: look at the card again afterwards. */
  private again = false;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;
  /** Factory calls so far (for logs). */
  builds = 0;

  constructor(
    readonly model: ServedModel,
    private readonly factory: ChatEngineFactory,
    private readonly localDir: string,
    private readonly backoff: Backoff = DEFAULT_BACKOFF,
  ) {}

  /** The engine serving the model, or a 503 while none was built yet. */
  current(): ChatEngine {
    if (this.engine) return this.engine;
    throw new ApiError(503, `the chat processor for \`${this.model.name}\` is not ready yet`, { type: 'service_unavailable', code: 'model_not_ready', retryAfter: 1 });
  }

  get ready(): boolean {
    return this.engine !== null;
  }

  /** The model's workers changed (or serving starts): build or rebuild when the card is new. */
  workersChanged(): void {
    if (this.closed) return;
    if (this.building) {
      this.again = true;
      this.wake?.();
      return;
    }
    void this.run();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
  }

  private async run(): Promise<void> {
    this.building = true;
    try {
      do {
        this.again = false;
        await this.buildForNewestWorker();
      } while (this.again && !this.closed);
    } finally {
      this.building = false;
    }
  }

  /** The card follows the most recently registered worker (the one a card change comes with). */
  private async buildForNewestWorker(): Promise<void> {
    let delay = this.backoff.initialMs;
    for (let attempt = 1; !this.closed; attempt++) {
      const workers = this.model.pool.workers;
      const w: Worker | undefined = workers[workers.length - 1];
      if (!w) return; // no worker yet: the first one to register builds
      try {
        const info = await withTimeout(w.client.modelInfo(), MODEL_INFO_TIMEOUT_MS);
        const runtime = runtimeConfigOf(info);
        const key = cardKey(runtime, this.model.info.contextLength);
        if (key === this.builtKey) return;
        this.builds++;
        const engine = await this.factory(w.id, modelCard(this.model, this.localDir, runtime), routedEngineFor(this.model));
        if (!engine || typeof (engine as ChatEngine).generate !== 'function') throw new TypeError('the factory must return an engine with a generate(request, context) method');
        const first = this.engine === null;
        this.engine = engine;
        this.builtKey = key;
        log.info(`chat processor ${first ? 'serving' : 'rebuilt for a new card of'} model ${this.model.name}`, { model: this.model.name, worker: w.id, builds: this.builds });
        return;
      } catch (err) {
        log.warn(`chat processor factory for model ${this.model.name} failed (attempt ${attempt}); retrying in ${delay} ms`, { model: this.model.name, error: err instanceof Error ? err.message : String(err) });
      }
      await this.sleep(delay);
      delay = Math.min(delay * 2, this.backoff.maxMs);
      // A worker change while waiting: try at once with the newest worker.
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        if (this.timer) clearTimeout(this.timer);
        this.timer = null;
        this.wake = null;
        resolve();
      };
      this.wake = done;
      this.timer = setTimeout(done, ms);
      this.timer.unref();
    });
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (t = setTimeout(() => reject(new Error(`no GetModelInfo answer in ${ms} ms`)), ms)))]).finally(() => clearTimeout(t));
}
