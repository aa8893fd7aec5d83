// A model's router across worker roles. The main router chooses among the aggregated and
// decode workers (KV overlap where they publish events, else load), the prefill router among
// the prefill workers (KV overlap from their events, each in its own block size, and load);
// each has its own queue, busy thresholds and load table. A request chosen onto a decode
// worker also gets a prefill worker: its Dispatch carries the prefill leg (`prefill`).
//
// Pins: backend_instance_id / decode_worker_id (and x-dynamo-worker-instance-id) name the
// main choice, prefill_worker_id (and x-dynamo-prefill-instance-id) the prefill choice; each
// with its dp rank. A pinned id that is unknown or of the wrong role is a 400 naming the
// field, a pinned worker that is down a 503. On a model with no prefill workers the prefill
// pins keep their meaning from before disaggregation: a body pin is a 400, header pins are
// ignored (and counted by the protocol layer).
//
// With decode workers but no healthy prefill worker, a decode worker whose engine can
// compute the prompt itself (vLLM's) serves the request alone unless --disagg-enforce; an
// SGLang decode worker cannot, so the request fails 503 with Retry-After.

import { DirectRouteError } from './errors.js';
import type { ModelRouter } from './router.js';
import type { Dispatch, RouteHints, RouteRequest, Router } from './types.js';
import { NoWorkerError, UnknownWorkerError, WorkerDownError, WrongRoleError, type WorkerPool } from './worker-pool.js';

export interface DisaggregationOptions {
  /** Never serve a decode worker's request without a prefill leg (Dynamo's --enforce-disagg). */
  enforce: boolean;
  /** Counted when a request is served by a decode worker alone (no prefill worker). */
  onFallback?: () => void;
}

/** A request pin the router could not honour, as a 400/503 naming the request field. */
export class PinError extends Error {
  constructor(
    readonly apiStatus: number,
    readonly code: string,
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

export class NoPrefillWorkerError extends Error {
  readonly apiStatus = 503;
  readonly code = 'no_prefill_worker_available';
  constructor(model: string) {
    super(`no healthy prefill worker is available for model \`${model}\`; its decode workers need one`);
  }
}

export class DisaggregatedRouter implements Router {
  constructor(
    readonly pool: WorkerPool,
    /** Over the aggregated and decode workers. */
    readonly main: ModelRouter,
    /** Over the prefill workers. */
    readonly prefill: ModelRouter,
    private readonly o: DisaggregationOptions,
  ) {
    this.sameSeed = main.opts.hashSeed === prefill.opts.hashSeed;
  }

  private readonly sameSeed: boolean;

  /** The field a main-router pin names: decode_worker_id on a disaggregated model. */
  private get mainField(): string {
    return this.pool.disaggregated ? 'nvext.decode_worker_id' : 'nvext.backend_instance_id';
  }

  /** --disagg-enforce: a decode worker never serves a request alone. */
  get enforced(): boolean {
    return this.o.enforce;
  }

  validate(h: RouteHints): void {
    pinned(() => this.main.validate(mainHints(h)), h.workerId, this.mainField);
    if (!this.prefillPinned(h)) return;
    pinned(() => this.prefill.validate(prefillHints(h)), h.prefillWorkerId, 'nvext.prefill_worker_id');
  }

  route(req: RouteRequest): Dispatch | Promise<Dispatch> {
    const h = req.hints;
    const field = this.mainField;
    const mreq = h.prefillWorkerId !== undefined || h.prefillDpRank !== undefined ? { ...req, hints: mainHints(h) } : req;
    const routed = pinned(() => this.main.route(mreq), h.workerId, field);
    if (routed instanceof Promise) return routed.then((d) => this.withPrefill(d, req, mreq.keys), (err) => Promise.reject(pinFailure(err, h.workerId, field)));
    return this.withPrefill(routed, req, mreq.keys);
  }

  close(): void {
    this.main.close();
    this.prefill.close();
  }

  /** A body prefill pin on a model that has no prefill workers is refused; header pins are dropped. */
  private prefillPinned(h: RouteHints): boolean {
    if (h.prefillWorkerId === undefined && h.prefillDpRank === undefined) return false;
    if (this.pool.disaggregated) return true;
    if (h.prefillPinnedInBody) {
      throw new PinError(400, 'unsupported_parameter', 'nvext.prefill_worker_id', `prefill worker routing (\`nvext.prefill_worker_id\`, \`nvext.prefill_dp_rank\`) needs disaggregated prefill workers, which model \`${this.pool.model}\` does not have`);
    }
    return false;
  }

  private withPrefill(d: Dispatch, req: RouteRequest, keys: RouteRequest['keys']): Dispatch | Promise<Dispatch> {
    const h = req.hints;
    let usePins: boolean;
    try {
      usePins = this.prefillPinned(h);
    } catch (err) {
      d.done();
      throw err;
    }
    if (d.worker.role !== 'decode' || req.ephemeral) return d;
    const preq: RouteRequest = { tokens: req.tokens, hints: usePins ? prefillHints(h) : prefillHints({ ...h, prefillWorkerId: undefined, prefillDpRank: undefined }), signal: req.signal };
    // Same salt and adapter namespace, same seed: the main router's block keys hold.
    if (this.sameSeed) preq.keys = keys;
    let p: Dispatch | Promise<Dispatch>;
    try {
      p = this.routePrefill(preq);
    } catch (err) {
      return this.prefillUnavailable(d, err);
    }
    if (p instanceof Promise) return p.then((pd) => attach(d, pd), (err) => this.prefillUnavailable(d, err));
    return attach(d, p);
  }

  private routePrefill(req: RouteRequest): Dispatch | Promise<Dispatch> {
    const h = req.hints;
    try {
      const r = this.prefill.route(req);
      return r instanceof Promise ? r.catch((err) => Promise.reject(pinFailure(err, h.workerId, 'nvext.prefill_worker_id'))) : r;
    } catch (err) {
      throw pinFailure(err, h.workerId, 'nvext.prefill_worker_id');
    }
  }

  /** No prefill leg could be had: a vLLM decode worker may go alone; otherwise the request fails. */
  private prefillUnavailable(d: Dispatch, err: unknown): Dispatch {
    const noneThere = err instanceof NoWorkerError;
    if (noneThere && !this.o.enforce && d.worker.client.url.startsWith('vllm+')) {
      this.o.onFallback?.();
      return d;
    }
    d.done();
    throw noneThere ? new NoPrefillWorkerError(this.pool.model) : err;
  }
}

function attach(d: Dispatch, p: Dispatch): Dispatch {
  (d as { prefill?: Dispatch }).prefill = p;
  return d;
}

/** The main router's hints: the prefill pins are not its. */
function mainHints(h: RouteHints): RouteHints {
  return { ...h, prefillWorkerId: undefined, prefillDpRank: undefined };
}

/** The prefill router's hints: its pins in the main pins' place; no session pin (sessions follow decode). */
function prefillHints(h: RouteHints): RouteHints {
  return { workerId: h.prefillWorkerId, dpRank: h.prefillDpRank, cacheSalt: h.cacheSalt, lora: h.lora, priority: h.priority, strictPriority: h.strictPriority, osl: h.osl };
}

function pinned<T>(f: () => T, id: number | undefined, param: string): T {
  try {
    return f();
  } catch (err) {
    throw pinFailure(err, id, param);
  }
}

/** Router errors about a pinned worker, told in terms of the request field that pinned it. */
function pinFailure(err: unknown, id: number | undefined, param: string): unknown {
  if (err instanceof WrongRoleError || err instanceof UnknownWorkerError) return new PinError(400, err.code, param, `\`${param}\`: ${err.message}`);
  if (err instanceof WorkerDownError) return new PinError(503, err.code, param, `\`${param}\`: ${err.message}`);
  if (err instanceof DirectRouteError && param === 'nvext.prefill_worker_id' && id === undefined) {
    return new PinError(400, 'worker_id_required', param, 'the router is in direct mode: name the prefill worker with nvext.prefill_worker_id or the x-dynamo-prefill-instance-id header');
  }
  return err;
}
