// inference.GRPCInferenceService: the KServe v2 / Triton gRPC face over the served
// models. Health and metadata answer from the app context; ModelInfer and
// ModelStreamInfer read each request (./request.ts) and run it on the shared request path
// (./infer.ts). Every failure is an ApiError mapped to its gRPC status (error-wire.ts); on
// ModelStreamInfer a failed request gets a response whose error_message says why (as
// Triton's server does) and the stream goes on. Each inference request is counted in the
// same metrics as HTTP requests, with the rpc's path as the `endpoint` label.

import type { RequestTrace } from '../tracing/request-trace.js';
import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import { ApiError } from '../protocol/errors.js';
import { grpcError } from '../protocol/error-wire.js';
import { modelFor, type AppContext } from '../api/context.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { log } from '../log.js';
import { countRequest } from '../metrics/frontend.js';
import { GRPCInferenceService, ModelInferResponseSchema, ModelStreamInferResponseSchema, type ModelInferRequest, type ModelInferResponse, type ModelStreamInferResponse } from '../gen/kserve/grpc_service_pb.js';
import type { Cancellation } from '../engine/types.js';
import { RequestCancellation } from '../http/request-cancellation.js';
import { readInferRequest } from './request.js';
import { runInfer } from './infer.js';
import { modelConfig, modelMetadata, MODEL_VERSION } from './metadata.js';
import { ResponseQueue } from './response-queue.js';
import { requestKey, ticketFor, type LimitTicket } from '../pipeline/rate-limit.js';

const SERVICE = GRPCInferenceService.typeName;
const INFER_PATH = `/${SERVICE}/ModelInfer`;
const STREAM_PATH = `/${SERVICE}/ModelStreamInfer`;

export interface ServiceInfo {
  /** ServerMetadata's version (package.json's). */
  version: string;
  limits?: InferLimits;
}

/** The HTTP server's limits, applied to every inference request (unary, or one on a stream). */
export interface InferLimits {
  /** --max-concurrent-requests (0: none), counted in `admitted` with HTTP's generations. */
  maxConcurrentRequests: number;
  /** One Int32 shared with the HTTP server(s) of the process. */
  admitted: SharedArrayBuffer;
  /** --request-timeout-secs in ms (0: none): then DEADLINE_EXCEEDED and the engine request is aborted. */
  requestTimeoutMs: number;
}

const NO_LIMITS: InferLimits = { maxConcurrentRequests: 0, admitted: new SharedArrayBuffer(4), requestTimeoutMs: 0 };

export function kserveService(ctx: AppContext, info: ServiceInfo): Partial<ServiceImpl<typeof GRPCInferenceService>> {
  const limits = new Limits(info.limits ?? NO_LIMITS);
  const ready = (m: ServedModel) => !ctx.lifecycle.draining && m.pool.workers.some((w) => w.healthy);
  return {
    serverLive: () => ({ live: true }),
    serverReady: () => ({ ready: [...ctx.models.values()].some(ready) }),
    // A readiness probe answers a boolean: an unknown model is not ready (as Triton answers).
    modelReady: (req) => {
      const m = ctx.models.get(req.name);
      return { ready: m !== undefined && (req.version === '' || req.version === MODEL_VERSION) && ready(m) };
    },
    serverMetadata: () => ({ name: 'portico', version: info.version, extensions: [] }),
    modelMetadata: (req) => guarded(() => modelMetadata(modelOf(ctx, req.name, req.version).name)),
    modelConfig: (req) =>
      guarded(() => {
        const m = modelOf(ctx, req.name, req.version);
        return { config: modelConfig(m.name, m.info.contextLength) };
      }),
    modelInfer: (req, hctx) => modelInfer(ctx, limits, req, hctx),
    modelStreamInfer: (reqs, hctx) => modelStreamInfer(ctx, limits, reqs, hctx),
  };
}

function modelOf(ctx: AppContext, name: string, version: string): ServedModel {
  const m = modelFor(ctx, name);
  if (version !== '' && version !== MODEL_VERSION) throw ApiError.notFound(`The model \`${name}\` has no version ${JSON.stringify(version)} (it serves version ${MODEL_VERSION}).`, 'model_version');
  return m;
}

function guarded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw grpcError(err);
  }
}

async function modelInfer(ctx: AppContext, limits: Limits, req: ModelInferRequest, hctx: HandlerContext): Promise<ModelInferResponse> {
  let out: ModelInferResponse | null = null;
  await observed(ctx, limits, INFER_PATH, req, hctx, async (model, r, signal, trace) => {
    if (r.stream) throw ApiError.badRequest('input `stream` is true: streamed responses need ModelStreamInfer', 'stream');
    await runInfer({ model, req: r, engineRequestId: engineId(), cancellation: signal, decoupled: false, arrived: performance.now(), limit: callTicket(ctx, hctx, true), trace }, (res) => (out = res));
  }).catch((err: unknown) => {
    throw grpcError(err);
  });
  return out ?? create(ModelInferResponseSchema, { modelName: req.modelName, id: req.id });
}

/**
 * Requests on one stream run concurrently; their responses go out in the order they are
 * made, each with its request's id. The stream ends once the client has sent its last
 * request and every request has answered. Closing or cancelling the stream aborts the
 * engine requests still running (they share the call's signal).
 */
async function* modelStreamInfer(ctx: AppContext, limits: Limits, reqs: AsyncIterable<ModelInferRequest>, hctx: HandlerContext): AsyncGenerator<ModelStreamInferResponse> {
  const queue = new ResponseQueue<ModelStreamInferResponse>();
  let running = 0;
  let reading = true;
  const settled = () => {
    if (!reading && running === 0) queue.close();
  };
  const one = async (req: ModelInferRequest) => {
    try {
      await observed(ctx, limits, STREAM_PATH, req, hctx, (model, r, signal, trace) =>
        runInfer({ model, req: r, engineRequestId: engineId(), cancellation: signal, decoupled: true, arrived: performance.now(), limit: callTicket(ctx, hctx, false), trace }, (res) => queue.push(streamResponse(res))),
      );
    } catch (err) {
      if (hctx.signal.aborted) return; // nobody is reading the stream any more
      const e = ApiError.from(err);
      queue.push(
        create(ModelStreamInferResponseSchema, {
          errorMessage: e.message,
          inferResponse: { modelName: req.modelName, modelVersion: req.modelVersion, id: req.id, parameters: { triton_final_response: { parameterChoice: { case: 'boolParam', value: true } } } },
        }),
      );
    } finally {
      running--;
      settled();
    }
  };
  void (async () => {
    try {
      for await (const req of reqs) {
        running++;
        void one(req);
      }
    } catch {
      // The client reset the stream: the call's signal aborts what is running.
    } finally {
      reading = false;
      settled();
    }
  })();
  yield* queue;
}

/**
 * The rate-limit budget of the call's key (metadata `authorization: Bearer KEY`). A unary
 * call's response metadata carries the x-ratelimit-* headers (a refusal: with
 * RESOURCE_EXHAUSTED); a stream's requests share one head, sent before they are admitted,
 * so theirs carry none (a refusal is the request's error_message).
 */
function callTicket(ctx: AppContext, hctx: HandlerContext, headers: boolean): LimitTicket | null {
  const limits = ctx.rateLimits;
  if (limits === undefined || !limits.active) return null;
  const key = requestKey((name) => hctx.requestHeader.get(name) ?? '');
  return ticketFor(limits, key, 'openai', headers ? { addResponseHeader: (n, v) => hctx.responseHeader.set(n, v) } : null);
}

function streamResponse(res: ModelInferResponse): ModelStreamInferResponse {
  const m = create(ModelStreamInferResponseSchema);
  m.inferResponse = res;
  return m;
}

let engineSeq = 0;
const ENGINE_PREFIX = `kserve-${randomUUID().slice(0, 8)}`;
/** Unique per request, never the client's id (two clients may send the same one). */
function engineId(): string {
  return `${ENGINE_PREFIX}-${(++engineSeq).toString(36)}`;
}

/**
 * Runs one inference request with the per-request bookkeeping HTTP requests get: the model's
 * in-flight gauge, requests_total{model, endpoint, request_type, status} (status as the
 * HTTP-equivalent code: 200, the ApiError's status, 499 when the client went away),
 * request duration and disconnects; failures are logged as HTTP's are.
 */
async function observed(
  ctx: AppContext,
  limits: Limits,
  endpoint: string,
  req: ModelInferRequest,
  hctx: HandlerContext,
  fn: (model: ServedModel, r: ReturnType<typeof readInferRequest>, signal: Cancellation, trace: RequestTrace | null) => Promise<void>,
): Promise<void> {
  const t0 = performance.now();
  const callSignal = hctx.signal;
  // Tracing on: the request's trace, from the call's traceparent / tracestate metadata.
  const tracer = ctx.tracer ?? null;
  const trace = tracer === null ? null : tracer.start((h) => hctx.requestHeader.get(h) ?? '', 'POST', endpoint, req.id, t0);
  let model: ServedModel | null = null;
  let stream = false;
  let status = 200;
  let admitted = false;
  // The request's own cancellation, fired by the call's signal only while the request runs:
  // Connect aborts a call's signal when the call completes too, which would abort an engine
  // stream that is ending by itself (runGeneration reads its last message in the background).
  const cancel = new RequestCancellation();
  const onAbort = () => cancel.abort();
  callSignal.addEventListener('abort', onAbort);
  if (callSignal.aborted) cancel.abort();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  try {
    if (ctx.lifecycle.draining) throw new ApiError(503, 'the server is shutting down', { code: 'shutting_down' });
    model = modelOf(ctx, req.modelName, req.modelVersion);
    model.stats.inflight.inc();
    const r = readInferRequest(req);
    stream = r.stream;
    if (trace !== null) trace.describe(model.name, stream);
    admitted = limits.admit();
    if (limits.requestTimeoutMs > 0) {
      timer = setTimeout(() => {
        timedOut = true;
        cancel.abort();
      }, limits.requestTimeoutMs);
    }
    await fn(model, r, cancel, trace);
  } catch (err) {
    let e = ApiError.from(err);
    if (timedOut && !callSignal.aborted) e = new ApiError(504, `the request did not finish within the server's limit of ${limits.requestTimeoutMs / 1000} s`, { code: 'request_timeout' });
    status = callSignal.aborted ? 499 : e.status;
    if (status >= 500) log.error('kserve request failed', { endpoint, id: req.id, status, error: e.message, detail: e.detail });
    else log.debug('kserve request rejected', { endpoint, id: req.id, status, error: e.message });
    throw callSignal.aborted ? new ConnectError('the request was cancelled', Code.Canceled) : e;
  } finally {
    callSignal.removeEventListener('abort', onAbort);
    clearTimeout(timer);
    if (admitted) limits.release();
    if (trace !== null) trace.end(status, status === 499);
    countRequest(ctx.metrics, model?.name ?? '', endpoint, stream ? 'stream' : 'unary', status);
    if (model) {
      model.stats.inflight.dec();
      model.stats.duration.observe((performance.now() - t0) / 1000);
      if (status === 499) model.stats.disconnected.inc();
    }
  }
}

/** --max-concurrent-requests over the process-wide count HTTP's generations use too. */
class Limits {
  private readonly count: Int32Array;
  readonly requestTimeoutMs: number;
  private readonly max: number;

  constructor(l: InferLimits) {
    this.count = new Int32Array(l.admitted);
    this.max = l.maxConcurrentRequests;
    this.requestTimeoutMs = l.requestTimeoutMs;
  }

  /** Take a place (false: no limit, nothing taken); a full house is UNAVAILABLE, as HTTP's 503. */
  admit(): boolean {
    if (this.max <= 0) return false;
    if (Atomics.add(this.count, 0, 1) >= this.max) {
      Atomics.sub(this.count, 0, 1);
      throw new ApiError(503, `the server is at its limit of ${this.max} concurrent requests; retry shortly`, { code: 'too_many_requests' });
    }
    return true;
  }

  release(): void {
    Atomics.sub(this.count, 0, 1);
  }
}
