// The engine stream of a disaggregated request: two legs, one stream. The client's events
// are the decode worker's; the prefill leg runs beside it (SGLang: both legs at once, met at
// the prefill worker's bootstrap server by room) or before it (vLLM: prefill with max_tokens
// 1, its kv_transfer_params handed to decode). What each protocol puts on each leg is
// src/engine/disaggregation.ts's; this file runs the legs.
//
// Failures: a prefill leg that fails before decode produced anything fails the request (the
// decode leg is aborted; the prefill worker's health hears of it, not the decode worker's);
// after that it no longer matters. A decode failure aborts the prefill leg if it still runs.
// The rendezvous is bounded: once the prefill leg is over, decode must produce its first
// output within rendezvousTimeoutMs, or both legs are aborted and the request fails 503
// kv_transfer_timeout. A client disconnect reaches both legs through the one signal.
//
// The prefill leg has its own WorkerTurn (in-flight count, load, first token, health); the
// decode leg's is the caller's, as for any engine stream.

import { ApiError } from '../protocol/errors.js';
import { bootstrapLegs, pdHandoffOf, relayPlan, type PrefillSide } from '../engine/disaggregation.js';
import type { EngineEventHandler, EngineEvents } from '../engine/generate-stream.js';
import type { Cancellation, EngineEvent, GenerateParams } from '../engine/types.js';
import type { Dispatch } from '../router/types.js';
import { log } from '../log.js';
import { WorkerTurn } from './worker-turn.js';
import { asWorkerFault } from './worker-fault.js';
import type { PdSettings } from './pd-settings.js';
import { pushed, PullQueue } from './pushed.js';
import type { ServedModel } from './served-model.js';

/** The engine stream of a dispatch: its worker's, or both legs' when it has a prefill leg. */
export function openEngineStream(model: ServedModel, d: Dispatch, params: GenerateParams, signal: Cancellation): AsyncIterable<EngineEvent> {
  const p = d.prefill;
  if (!p) return d.worker.client.generate(params, signal);
  return new DisaggregatedEvents(model, d, p, params, signal);
}

type LegState = 'new' | 'running' | 'over';

class DisaggregatedEvents implements EngineEvents {
  private h: EngineEventHandler | null = null;
  private decode: EngineEvents | null = null;
  private prefill: EngineEvents | null = null;
  private readonly prefillTurn: WorkerTurn;
  private state: LegState = 'new';
  private prefillOver = false;
  private decodeStarted = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly settings: PdSettings;
  private pull: PullQueue | null = null;

  constructor(
    private readonly model: ServedModel,
    private readonly d: Dispatch,
    private readonly p: Dispatch,
    private readonly params: GenerateParams,
    private readonly signal: Cancellation,
  ) {
    this.prefillTurn = new WorkerTurn(model);
    this.settings = model.pd;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  pipe(h: EngineEventHandler): void {
    this.h = h;
    this.state = 'running';
    const side: PrefillSide = { url: this.p.worker.client.url, engine: this.p.worker.engine, bootstrapPort: this.settings.bootstrapPort, dpRank: this.p.dpRank };
    try {
      if (pdHandoffOf(this.d.worker.client.url) === 'bootstrap') this.bootstrap(side);
      else this.relay(side);
    } catch (err) {
      this.failAll(err);
    }
  }

  /** SGLang: both legs at once, the same room. */
  private bootstrap(side: PrefillSide): void {
    const legs = bootstrapLegs(this.params, side);
    this.prefillTurn.start(this.p, legs.prefill);
    this.prefill = pushed(this.p.worker.client.generate(legs.prefill, this.signal));
    this.prefill.pipe({
      event: (ev) => this.prefillTurn.observe(ev),
      end: () => this.prefillEnded(),
      fail: (err) => this.prefillFailed(err),
    });
    if (this.state === 'over') return;
    this.openDecode(legs.decode);
  }

  /** vLLM: prefill first; its completion's kv_transfer_params go to decode. */
  private relay(side: PrefillSide): void {
    const plan = relayPlan(this.params, side);
    this.prefillTurn.start(this.p, plan.prefill);
    let returned: string | undefined;
    this.prefill = pushed(this.p.worker.client.generate(plan.prefill, this.signal));
    this.prefill.pipe({
      event: (ev) => {
        this.prefillTurn.observe(ev);
        if (ev.kind === 'done' && ev.done.kvTransferParams !== undefined) returned = ev.done.kvTransferParams;
      },
      end: () => {
        this.prefillEnded();
        if (this.state !== 'running') return;
        if (returned === undefined && plan.connector === 'nixl') log.warn('the prefill worker returned no kv_transfer_params; the decode worker computes the prompt itself', { prefill: this.p.worker.id, decode: this.d.worker.id });
        try {
          this.openDecode(plan.decode(returned));
        } catch (err) {
          this.failAll(err);
        }
      },
      fail: (err) => this.prefillFailed(err),
    });
  }

  private openDecode(params: GenerateParams): void {
    const decode = (this.decode = pushed(this.d.worker.client.generate(params, this.signal)));
    decode.pipe({
      event: (ev) => {
        if (this.state !== 'running') return;
        if (!this.decodeStarted) {
          this.decodeStarted = true;
          this.clearTimer();
        }
        this.h!.event(ev);
      },
      end: () => {
        if (this.state !== 'running') return;
        this.state = 'over';
        this.clearTimer();
        this.stopPrefill();
        this.h!.end();
      },
      fail: (err) => {
        if (this.state !== 'running') return;
        this.state = 'over';
        this.clearTimer();
        this.stopPrefill();
        this.h!.fail(err);
      },
    });
  }

  private prefillEnded(): void {
    this.prefillOver = true;
    this.prefillTurn.end();
    if (this.state !== 'running' || this.decodeStarted) return;
    const ms = this.settings.rendezvousTimeoutMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.state !== 'running' || this.decodeStarted) return;
      log.warn('the decode worker produced nothing after the prefill leg ended; both legs aborted', { prefill: this.p.worker.id, decode: this.d.worker.id, waitedMs: ms });
      this.failAll(asWorkerFault(new ApiError(503, `the decode worker received no KV from the prefill worker within ${ms / 1000} s`, { code: 'kv_transfer_timeout' })));
    }, ms);
  }

  private prefillFailed(err: unknown): void {
    this.prefillOver = true;
    // The prefill worker's health hears of it; the client sees it as any engine failure.
    const failure = asWorkerFault(this.prefillTurn.fail(err));
    if (this.state !== 'running' || this.decodeStarted) return;
    this.failAll(failure);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private stopPrefill(): void {
    const p = this.prefill;
    if (!p || this.prefillOver) return;
    this.prefillOver = true;
    void p.return().then(
      () => this.prefillTurn.end(),
      () => this.prefillTurn.end(),
    );
  }

  /** Both legs end now; the request fails with `err`. */
  private failAll(err: unknown): void {
    if (this.state === 'over') return;
    this.state = 'over';
    this.clearTimer();
    this.stopPrefill();
    if (this.decode) void this.decode.return().catch(() => {});
    this.h?.fail(err);
  }

  hold(): void {
    this.decode?.hold();
  }

  release(): void {
    this.decode?.release();
  }

  async return(): Promise<IteratorResult<EngineEvent>> {
    const wasRunning = this.state === 'running';
    this.state = 'over';
    this.clearTimer();
    this.stopPrefill();
    if (wasRunning && this.decode) await this.decode.return().catch(() => {});
    return DONE;
  }

  next(): Promise<IteratorResult<EngineEvent>> {
    if (!this.pull) {
      this.pull = new PullQueue(this);
      if (this.state === 'new') this.pipe(this.pull);
    }
    return this.pull.next();
  }
}

const DONE: IteratorResult<EngineEvent> = Object.freeze({ value: undefined, done: true }) as IteratorResult<EngineEvent>;
