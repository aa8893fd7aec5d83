// Request migration: a generation whose worker fails mid-stream continues on another worker
// from the exact point of failure. The engine stream of a dispatch is wrapped so that the
// request loop (runGeneration, and the routed engine of custom processors) reads one
// uninterrupted stream: every choice's generated ids are kept as they arrive; on a failure
// that is the worker's (EngineError.health says so: a lost connection, a reset stream, the
// engine's internal error, a silent worker; or a prefill leg or KV hand-off that failed) and
// not the request's, each unfinished choice is sent again, to a worker the router picks with
// the failed ones excluded (once every worker has failed it, only the last one), as prompt +
// its ids so far with the rest of its token budget, one engine request per choice (n 1).
// Its events come back under the choice's index with the counts the client would have seen
// from one worker (prompt tokens of the original prompt, completion tokens counted from the
// start). The native per-choice outputs above (detokenizer, stop jail, parsers, logprobs)
// never know.
//
// Not migrated: a request cancelled by its client; a failure that is the request's (invalid
// argument, context exceeded, capacity); a request pinned to a worker; a request past
// --migration-max-seq-len tokens (its ids are no longer kept); one under a structured-output
// constraint once it has output (a grammar cannot resume mid-output); and after
// --migration-limit migrations, when the last failure is the answer. A worker removed from
// the pool (admin DELETE, an etcd lease that ended) hands its requests over the same way.

import { ApiError } from '../protocol/errors.js';
import { EngineError } from '../engine/errors.js';
import type { EngineEventHandler, EngineEvents } from '../engine/generate-stream.js';
import type { Cancellation, EngineEvent, GenerateParams } from '../engine/types.js';
import type { Dispatch, RouteHints } from '../router/types.js';
import { NoWorkerError, type Worker } from '../router/worker-pool.js';
import { log } from '../log.js';
import { openEngineStream } from './disaggregated-stream.js';
import { pushed, PullQueue } from './pushed.js';
import type { ServedModel } from './served-model.js';
import { WorkerTurn } from './worker-turn.js';
import type { MigrationSettings } from './migration-settings.js';
import { workerFault, type MigrationReason } from './worker-fault.js';

/**
 * The engine stream of a dispatched request, migrating on worker failures when the settings
 * and the request allow it; otherwise the dispatch's own stream. `turn` is the caller's turn
 * on the first worker: a migration ends it with the failure (the pool hears of it).
 */
export function migratingStream(model: ServedModel, d: Dispatch, params: GenerateParams, signal: Cancellation, route: RouteHints, turn: WorkerTurn, onMoved?: (d: Dispatch) => void): AsyncIterable<EngineEvent> {
  const s = model.migration;
  if (s.limit <= 0 || route.workerId !== undefined) return openEngineStream(model, d, params, signal);
  return new MigratingEvents(model, d, params, signal, route, turn, s, onMoved);
}

/**
 * One engine request of the migrating stream: its worker, turn, stream, and the choice it
 * carries; the handler of its engine stream (a class, not closures: one per request).
 */
class Leg implements EngineEventHandler {
  events: EngineEvents | null = null;
  over = false;

  constructor(
    private readonly owner: MigratingEvents,
    readonly d: Dispatch,
    readonly turn: WorkerTurn,
    /** The choice this leg carries (n 1 continuation), -1 for the original request on its first worker, -2 for it resent whole. */
    readonly choice: number,
    /** Ids the choice had before this leg (added to the engine's completion counts). */
    readonly before: number,
  ) {}

  event(ev: EngineEvent): void {
    this.owner.event(this, ev);
  }

  end(): void {
    this.owner.legEnded(this);
  }

  fail(err: unknown): void {
    this.owner.legFailed(this, err);
  }
}

class MigratingEvents implements EngineEvents {
  private h: EngineEventHandler | null = null;
  private legs: Leg[] = [];
  private readonly ids: number[][];
  private readonly finished: boolean[];
  private unfinished: number;
  /** Ids are kept (under --migration-max-seq-len). */
  private keeping = true;
  private kept = 0;
  private migrations = 0;
  private moving = false;
  private closed = false;
  private held = false;
  /** Workers this request failed on (made at its first migration). */
  private failed: Set<number> | null = null;
  private readonly n: number;

  constructor(
    private readonly model: ServedModel,
    first: Dispatch,
    private readonly params: GenerateParams,
    private readonly signal: Cancellation,
    private readonly route: RouteHints,
    turn: WorkerTurn,
    private readonly s: MigrationSettings,
    /** Told of the dispatch the request continues on (its first one, when several choices moved). */
    private readonly onMoved?: (d: Dispatch) => void,
  ) {
    this.n = Math.max(1, params.n ?? 1);
    const ids: number[][] = (this.ids = new Array<number[]>(this.n));
    for (let i = 0; i < this.n; i++) ids[i] = [];
    // (Assigned in a loop: fill() is a runtime call, and push() would grow a 16-slot store.)
    const finished: boolean[] = (this.finished = new Array<boolean>(this.n));
    for (let i = 0; i < this.n; i++) finished[i] = false;
    this.unfinished = this.n;
    this.kept = params.inputIds.length;
    if (s.maxSeqLen > 0 && this.kept > s.maxSeqLen) this.keeping = false;
    this.legs.push(new Leg(this, first, turn, -1, 0));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  pipe(h: EngineEventHandler): void {
    this.h = h;
    const leg = this.legs[0]!;
    this.open(leg, this.params);
  }

  private open(leg: Leg, params: GenerateParams): void {
    let events: EngineEvents;
    try {
      events = leg.events = pushed(openEngineStream(this.model, leg.d, params, this.signal));
    } catch (err) {
      this.legFailed(leg, err);
      return;
    }
    this.track(leg.d.worker);
    events.pipe(leg);
    if (this.held) events.hold();
  }

  event(leg: Leg, ev: EngineEvent): void {
    if (leg.over || this.closed) return;
    // A leg of this stream's own (not the caller's first) is observed by its own turn; a
    // continuation speaks for its choice with the counts of one run.
    if (leg.choice !== -1) leg.turn.observe(ev);
    if (leg.choice >= 0) ev = this.rewrite(leg, ev);
    const i = ev.kind === 'chunk' ? ev.chunk.index : ev.done.index;
    if (i >= 0 && i < this.n && !this.finished[i]) {
      const fresh = ev.kind === 'chunk' ? ev.chunk.tokenIds : ev.done.outputIds;
      if (fresh.length > 0) this.output = true;
      if (this.keeping && fresh.length > 0) {
        const ids = this.ids[i]!;
        for (let k = 0; k < fresh.length; k++) ids.push(fresh[k]!);
        this.kept += fresh.length;
        if (this.s.maxSeqLen > 0 && this.kept > this.s.maxSeqLen) this.stopKeeping();
      }
      if (ev.kind === 'done') {
        this.finished[i] = true;
        this.unfinished--;
      }
    }
    this.h!.event(ev);
  }

  /** A continuation's event as the original request would have sent it. */
  private rewrite(leg: Leg, ev: EngineEvent): EngineEvent {
    const prompt = this.params.inputIds.length;
    if (ev.kind === 'chunk') {
      const c = ev.chunk;
      return { kind: 'chunk', chunk: { ...c, index: leg.choice, promptTokens: prompt, completionTokens: c.completionTokens + leg.before, cachedTokens: 0, promptLogprobs: undefined } };
    }
    const x = ev.done;
    return { kind: 'done', done: { ...x, index: leg.choice, promptTokens: prompt, completionTokens: x.completionTokens + leg.before, cachedTokens: 0 } };
  }

  /** Some choice has output. */
  private output = false;

  /** Some choice has output (or has finished). */
  private started(): boolean {
    return this.output || this.unfinished < this.n;
  }

  private stopKeeping(): void {
    if (this.keeping) this.model.stats.migrationSeqLenExceeded.inc();
    this.keeping = false;
    for (const ids of this.ids) ids.length = 0;
  }

  legEnded(leg: Leg): void {
    if (leg.over) return;
    leg.over = true;
    if (leg.choice !== -1) leg.turn.end();
    this.untrack(leg.d.worker);
    if (this.closed || this.moving) return;
    if (this.legs.every((l) => l.over)) {
      this.closed = true;
      this.h!.end();
    }
  }

  legFailed(leg: Leg, err: unknown): void {
    if (leg.over) return;
    leg.over = true;
    this.untrack(leg.d.worker);
    if (this.closed) {
      leg.turn.end();
      return;
    }
    const reason = this.signal.aborted || this.settled ? null : workerFault(err);
    if (reason === null || !this.canMove()) {
      if (reason !== null && this.migrations >= this.s.limit) this.model.stats.migrationsExhausted.inc();
      this.giveUp(leg, err);
      return;
    }
    this.move(leg, err, reason);
  }

  /** Whether what is left of the request can go on elsewhere. */
  private canMove(): boolean {
    if (this.migrations >= this.s.limit) return false;
    const started = this.started();
    if (started && !this.keeping) return false;
    // A grammar cannot resume mid-output.
    if (started && this.params.constraint) return false;
    return true;
  }

  /** The request fails with this leg's failure (mapped by its turn); the other legs are aborted. */
  private giveUp(leg: Leg, err: unknown): void {
    this.closed = true;
    // The caller's turn (the first leg's) maps and reports a raw failure itself; a
    // continuation's is mapped here by its own turn.
    const failure = leg.choice !== -1 ? leg.turn.fail(err) : err;
    this.abortLegs();
    this.h!.fail(failure);
  }

  private move(leg: Leg, err: unknown, reason: MigrationReason): void {
    this.moving = true;
    this.migrations++;
    this.lastFailure = leg.turn.fail(err); // the pool hears what it says of the worker
    // A failed prefill leg or hand-off is the prefill side's (its own turn told the pool): the
    // decode worker may serve the request again.
    if (reason !== 'handoff') {
      (this.failed ??= new Set()).add(leg.d.worker.id);
      this.lastWorker = leg.d.worker.id;
    }
    this.model.stats.migrations.labels(this.started() ? 'ongoing_request' : 'new_request', reason).inc();
    const fields = { model: this.model.name, request: this.params.requestId, from: leg.d.worker.id, reason, attempt: this.migrations };
    if (reason === 'worker_removed') log.info('request moved off a worker leaving the pool', fields);
    else log.warn('request migrated to another worker', fields);
    // Every leg still running is stopped: each unfinished choice goes on from its kept ids.
    this.abortLegs();
    this.resume();
  }

  /** The failure a client sees when the request cannot go on: the worker failure that moved it. */
  private lastFailure: ApiError | null = null;

  private resume(): void {
    void this.continueElsewhere().catch((e: unknown) => {
      if (this.closed) return;
      this.closed = true;
      this.abortLegs();
      log.debug('a migrating request found no worker to go on', { model: this.model.name, request: this.params.requestId, error: String(e) });
      this.model.stats.migrationsExhausted.inc();
      this.h!.fail(this.lastFailure ?? e);
    });
  }

  private async continueElsewhere(): Promise<void> {
    const started = this.started();
    const plans: Array<{ choice: number; params: GenerateParams; before: number }> = [];
    if (!started) {
      // Nothing generated yet: the original request, elsewhere.
      plans.push({ choice: -1, params: { ...this.params, requestId: `${this.params.requestId}-m${this.migrations}` }, before: 0 });
    } else {
      for (let i = 0; i < this.n; i++) {
        if (this.finished[i]) continue;
        plans.push({ choice: i, params: this.continuation(i), before: this.ids[i]!.length });
      }
    }
    const legs: Leg[] = [];
    for (const p of plans) {
      const d = await this.pick(p.params.inputIds);
      if (this.closed) {
        d.done();
        return;
      }
      const turn = new WorkerTurn(this.model);
      turn.start(d, p.params);
      // choice -2: the whole request again, its indexes the client's.
      legs.push(new Leg(this, d, turn, p.choice < 0 ? -2 : p.choice, p.before));
    }
    this.legs = legs;
    this.moving = false;
    if (legs.length > 0) this.onMoved?.(legs[0]!.d);
    for (let k = 0; k < legs.length; k++) this.open(legs[k]!, plans[k]!.params);
  }

  /**
   * The worker a continuation goes to: one this request has not failed on; when it has failed
   * on every worker (each failed once, and came back: a restart, a rolling update), any but
   * the one that failed last.
   */
  private async pick(tokens: Uint32Array): Promise<Dispatch> {
    try {
      return await this.model.router.route({ tokens, hints: this.route, signal: this.signal, exclude: this.failed ?? undefined });
    } catch (err) {
      if (!(err instanceof NoWorkerError) || this.lastWorker === null || this.failed === null || this.failed.size <= 1) throw err;
      return await this.model.router.route({ tokens, hints: this.route, signal: this.signal, exclude: new Set([this.lastWorker]) });
    }
  }

  /** The worker the request failed on (or left) last. */
  private lastWorker: number | null = null;

  /** Choice i's continuation: the prompt with its ids so far, the rest of its budget, n 1. */
  private continuation(i: number): GenerateParams {
    const p = this.params;
    const ids = this.ids[i]!;
    const input = new Uint32Array(p.inputIds.length + ids.length);
    input.set(p.inputIds);
    input.set(ids, p.inputIds.length);
    return {
      ...p,
      requestId: `${p.requestId}-m${this.migrations}-${i}`,
      inputIds: input,
      maxNewTokens: p.maxNewTokens === undefined ? undefined : Math.max(p.maxNewTokens - ids.length, 1),
      minNewTokens: p.minNewTokens === undefined ? undefined : Math.max(p.minNewTokens - ids.length, 0),
      n: 1,
      promptLogprobs: undefined,
      dataParallelRank: undefined,
      stream: true,
    };
  }

  private abortLegs(): void {
    for (const l of this.legs) {
      if (l.over) continue;
      l.over = true;
      this.untrack(l.d.worker);
      const turn = l.turn;
      const own = l.choice !== -1;
      const e = l.events;
      if (!e) {
        if (own) turn.end();
        continue;
      }
      void e.return().then(
        () => own && turn.end(),
        () => own && turn.end(),
      );
    }
  }

  /** A worker leaving the pool: the requests it serves are evacuated (see WorkerPool.remove). */
  evacuate(w: Worker): void {
    if (this.closed || this.moving || this.settled) return;
    const leg = this.legs.find((l) => !l.over && l.d.worker === w);
    // One that cannot move finishes there, as before migration existed.
    if (!leg || !this.canMove()) return;
    leg.over = true;
    this.untrack(w);
    this.move(leg, new EngineError('unavailable', `worker ${w.id} left the pool`, w.client.url, { health: 'none' }), 'worker_removed');
  }


  private track(w: Worker): void {
    (w.runs ??= new Set()).add(this);
  }

  private untrack(w: Worker): void {
    w.runs?.delete(this);
  }

  /** The reader has what it needs (run.ts reads the rest out): failures no longer move anything. */
  private settled = false;

  settle(): void {
    this.settled = true;
  }

  /** Choice i needs nothing more (the reader ended it): a migration does not continue it. */
  settleChoice(i: number): void {
    if (i < 0 || i >= this.n || this.finished[i]) return;
    this.finished[i] = true;
    this.unfinished--;
  }

  hold(): void {
    this.held = true;
    for (const l of this.legs) if (!l.over) l.events?.hold();
  }

  release(): void {
    this.held = false;
    for (const l of this.legs) if (!l.over) l.events?.release();
  }

  async return(): Promise<IteratorResult<EngineEvent>> {
    if (!this.closed) {
      this.closed = true;
      const pending = this.legs.filter((l) => !l.over && l.events);
      this.abortLegs();
      await Promise.all(pending.map((l) => l.events!.return().catch(() => undefined)));
    }
    return DONE;
  }

  private pull: PullQueue | null = null;

  next(): Promise<IteratorResult<EngineEvent>> {
    if (!this.pull) {
      this.pull = new PullQueue(this);
      this.pipe(this.pull);
    }
    return this.pull.next();
  }
}

const DONE: IteratorResult<EngineEvent> = Object.freeze({ value: undefined, done: true }) as IteratorResult<EngineEvent>;
