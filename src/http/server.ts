// The uWebSockets.js HTTP server: routes, body reading with a size limit, request ids,
// API-key checks, the concurrency limit, the rate-limit ticket of the request's key
// (admitted by the request loop), graceful drain, and the one place where a thrown error
// becomes an HTTP response.

import { timingSafeEqual } from 'node:crypto';
import { randomUuid } from '../protocol/random-ids.js';
import { uws, type HttpRequest, type HttpResponse, type us_listen_socket } from './uws.js';
import { UwsExchange, headerIn, type ExchangeOwner } from './exchange.js';
import { dropBody, framingOf, readBody, type BodySink } from './body-reader.js';
import { allowHeader, answerOptions } from './options-response.js';
import { ApiError } from '../protocol/errors.js';
import { errorBody, type ErrorFormat } from '../protocol/error-wire.js';
import { expireWith, sendError, sendErrorToResponse } from './error-response.js';
import type { Handler, Route } from '../api/exchange.js';
import { countRequest, type FrontendMetrics } from '../metrics/frontend.js';
import { log } from '../log.js';
import { accessCheck, GRANTED, REFUSED, type AccessOptions } from './access.js';
import { requestKey, ticketFor } from '../pipeline/rate-limit.js';
import type { RateLimits } from '../limits/key-limits.js';
import type { RequestTracer } from '../tracing/tracer.js';

export interface HttpServerOptions extends AccessOptions {
  host?: string;
  port: number;
  routes: Route[];
  maxBodyBytes?: number;
  /** Require this key, or one of these keys (Bearer or x-api-key), on every route not marked public. */
  apiKey?: string | readonly string[];
  /** Generation requests in flight before new ones get a 503; 0 or undefined: no limit. */
  maxConcurrentRequests?: number;
  /**
   * One Int32 counting the generations admitted by every server that shares it (the
   * shards of one process), so --max-concurrent-requests is one limit for the process.
   * Absent: this server counts alone.
   */
  admitted?: SharedArrayBuffer;
  /** Listen without SO_REUSEPORT (a server alone on its port; shards share theirs). */
  exclusivePort?: boolean;
  /** Where request counts, durations and disconnects are recorded. */
  metrics?: FrontendMetrics;
  /** Log one line per finished request. */
  logRequests?: boolean;
  /** Longest a generation request may run, in ms (0 or undefined: no limit); then 504 / an error event. */
  requestTimeoutMs?: number;
  /** Origins allowed to call the API from a browser ('*' for any); empty: no CORS headers. */
  corsOrigins?: readonly string[];
  /** Per-key rate limits (the budgets every shard shares); absent or inactive: none. */
  rateLimits?: RateLimits;
  /** Trace generation requests (--otlp-traces-endpoint); absent or null: tracing is off. */
  tracer?: RequestTracer | null;
}

export interface HttpServer {
  readonly port: number;
  /** Requests being served now. */
  readonly inflight: number;
  /** Refuse new generations; resolve when in-flight ones end or `timeoutMs` passes, then stop listening and abort the rest. Open connections stay open. */
  drain(timeoutMs: number): Promise<void>;
  close(): void;
}

const DEFAULT_MAX_BODY = 45 * 1024 * 1024;
/** uSockets' listen options (ListenOptions in uWS.js). */
const LISTEN_DEFAULT = 0;
const LISTEN_EXCLUSIVE_PORT = 1;
const REQUEST_ID_RE = /^[\x21-\x7e]{1,128}$/;

export function startHttpServer(opts: HttpServerOptions): Promise<HttpServer> {
  const app = uws.App();
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const live = new Set<UwsExchange>();
  let generating = 0;
  let draining = false;
  const keyList = (typeof opts.apiKey === 'string' ? [opts.apiKey] : (opts.apiKey ?? [])).filter((k) => k !== '').map((k) => Buffer.from(k));
  const key = keyList.length > 0 ? keyList : null;
  const access = accessCheck(opts);
  const limit = opts.maxConcurrentRequests ?? 0;
  const admitted = new Int32Array(opts.admitted ?? new SharedArrayBuffer(4));
  const timeoutMs = opts.requestTimeoutMs ?? 0;
  const rateLimits = opts.rateLimits;
  const tracer = opts.tracer ?? null;

  const cors = opts.corsOrigins ?? [];
  const allowOrigin = (origin: string): string | null => {
    if (!origin || cors.length === 0) return null;
    if (cors.includes('*')) return '*';
    return cors.includes(origin) ? origin : null;
  };

  const options = (res: HttpResponse, req: HttpRequest, allow: string | null): void => {
    try {
      answerOptions(res, req, allow, allowOrigin(req.getHeader('origin')));
    } catch (err) {
      log.error('OPTIONS failed', { error: String(err) });
      sendErrorToResponse(res, ApiError.from(err), 'openai');
    }
  };

  // What a request's end updates, shared by every exchange (no closures per request).
  const owner: ExchangeOwner = {
    get draining() {
      return draining;
    },
    finished(ex: UwsExchange): void {
      live.delete(ex);
      const r = ex.route!;
      if (r.generation && ex.countsAsGenerating) {
        generating--;
        if (limit > 0) Atomics.sub(admitted, 0, 1);
        if (ex.timer) clearTimeout(ex.timer);
      }
      if (ex.trace !== null) ex.trace.end(ex.clientLeft && ex.status === 0 ? 499 : ex.status, ex.clientLeft);
      if (opts.metrics) record(opts.metrics, ex, r.path);
      if (opts.logRequests) logRequest(ex, r);
    },
  };

  const begin = (ex: UwsExchange, res: HttpResponse, req: HttpRequest, r: Route, params: number, format: ErrorFormat): boolean => {
    if (cors.length > 0) ex.corsOrigin = allowOrigin(ex.header('origin'));
    live.add(ex);
    ex.countsInflight = r.generation === true;
    ex.route = r;
    ex.owner = owner;
    for (let i = 0; i < params; i++) {
      const raw = req.getParameter(i);
      try {
        ex.params.push(decodeURIComponent(raw));
      } catch {
        sendError(ex, ApiError.badRequest(`invalid percent-encoding in the path: ${JSON.stringify(raw.slice(0, 40))}`, null, 'invalid_path'), format);
        return false;
      }
    }
    const verdict = access(ex, res, r, format);
    if (verdict === REFUSED) return false;
    if (key && !r.public && verdict !== GRANTED && !authorized(ex, key)) {
      sendError(ex, new ApiError(401, 'Incorrect or missing API key: send it as "Authorization: Bearer <key>"', { code: 'invalid_api_key' }), format);
      return false;
    }
    if (r.generation) {
      if (draining) {
        sendError(ex, new ApiError(503, 'the server is shutting down', { type: 'service_unavailable', code: 'shutting_down' }), format, true);
        return false;
      }
      // Admission against the process-wide count: take a place, give it back if there was none.
      if (limit > 0 && Atomics.add(admitted, 0, 1) >= limit) {
        Atomics.sub(admitted, 0, 1);
        sendError(ex, new ApiError(503, `the server is at its limit of ${limit} concurrent requests; retry shortly`, { type: 'service_unavailable', code: 'too_many_requests', retryAfter: 1 }), format);
        return false;
      }
      // The key's budget, which runGeneration admits each generation against (429s there).
      if (rateLimits !== undefined && rateLimits.active) ex.rateLimit = ticketFor(rateLimits, requestKey((h) => ex.header(h)), format === 'anthropic' ? 'anthropic' : 'openai', ex);
      generating++;
      ex.countsAsGenerating = true;
      if (tracer !== null) ex.trace = tracer.start((h) => ex.header(h), r.method.toUpperCase(), r.path, ex.requestId, ex.startedAt);
      if (timeoutMs > 0) ex.timer = setTimeout(expire, timeoutMs, ex, timeoutMs, format);
    }
    return true;
  };

  const methodsByPath = new Map<string, string[]>();
  for (const r of opts.routes) {
    methodsByPath.set(r.path, [...(methodsByPath.get(r.path) ?? []), r.method]);
    const format = r.errors ?? 'openai';
    const params = paramCount(r.path);
    if (r.method === 'post') {
      app.post(r.path, (res, req) =>
        guarded(res, req, format, (ex) => {
          // Framing first: nothing of a body is kept before its headers are judged.
          const f = framingOf(ex.headers, maxBody);
          if (!f.ok) {
            const err = new ApiError(f.status, f.message, { code: f.code });
            if (f.status !== 413) sendError(ex, err, format, true);
            else refuseBody(ex, res, err, format);
            return;
          }
          if (begin(ex, res, req, r, params, format)) readBody(res, f.length, maxBody, bodySink(ex, maxBody, format, r.handler));
        }),
      );
    } else {
      const handle = (res: HttpResponse, req: HttpRequest) =>
        guarded(res, req, format, (ex) => {
          if (begin(ex, res, req, r, params, format)) run(ex, r.handler, format);
        });
      if (r.method === 'get') {
        app.get(r.path, handle);
        // HEAD: the GET's status and headers, no body (load balancers, curl -I).
        app.head(r.path, (res, req) =>
          guarded(res, req, format, (ex) => {
            ex.head = true;
            if (begin(ex, res, req, r, params, format)) run(ex, r.handler, format);
          }),
        );
      } else app.del(r.path, handle);
    }
  }
  for (const [path, methods] of methodsByPath) {
    const allow = allowHeader(methods);
    app.options(path, (res, req) => options(res, req, allow));
  }
  // Any other path: a CORS preflight where configured (the browser asks before it learns of the 404).
  if (cors.length > 0) app.options('/*', (res, req) => options(res, req, null));
  app.any('/*', (res, req) =>
    guarded(res, req, 'openai', (ex) => {
      ex.head = req.getMethod() === 'head';
      const err = new ApiError(404, `no route for ${req.getMethod().toUpperCase()} ${req.getUrl().slice(0, 200)}`, { code: 'not_found' });
      sendError(ex, err, 'openai');
    }),
  );

  return new Promise((resolve, reject) => {
    const listenOptions = opts.exclusivePort ? LISTEN_EXCLUSIVE_PORT : LISTEN_DEFAULT;
    // uWS.js takes (host, port, options, cb); its typings list only (port, options, cb).
    const listen = app.listen as unknown as (host: string, port: number, options: number, cb: (sock: us_listen_socket | false) => void) => void;
    listen.call(app, opts.host ?? '0.0.0.0', opts.port, listenOptions, (sock: us_listen_socket | false) => {
      if (!sock) {
        reject(new Error(`cannot listen on ${opts.host ?? '0.0.0.0'}:${opts.port}: the port is in use or the address is not this machine's`));
        return;
      }
      let listening = true;
      const stopListening = () => {
        if (listening) uws.us_listen_socket_close(sock);
        listening = false;
      };
      resolve({
        port: uws.us_socket_local_port(sock),
        get inflight() {
          return live.size;
        },
        async drain(timeoutMs: number) {
          // Keep listening while draining, so health checks see 503 and new work is refused
          // with a clear status; stop once in-flight generations are done or the deadline passes.
          draining = true;
          const deadline = Date.now() + timeoutMs;
          while (generating > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
          stopListening();
          for (const ex of [...live]) ex.abortFromServer();
          // No App.close(): called right after a burst of requests it aborts the process
          // with std::bad_alloc. Idle keep-alive connections stay open until the
          // process exits (one shard) or until their clients close them or uWS does after
          // 10 s idle (a shard's thread ends then); any request on one meanwhile is answered
          // (503 shutting_down for generation) and its connection closed after the response.
        },
        close: stopListening,
      });
    });
  });
}

function record(m: FrontendMetrics, ex: UwsExchange, endpoint: string): void {
  const model = ex.model;
  // scrapes and probes are not requests (Dynamo counts neither)
  if (endpoint === '/metrics' || endpoint === '/health' || endpoint === '/live' || endpoint === '/ready') return;
  const status = ex.clientLeft && ex.status === 0 ? 499 : ex.status;
  countRequest(m, model?.name ?? '', endpoint, ex.stream ? 'stream' : 'unary', status);
  if (!model) return;
  model.stats.duration.observe((performance.now() - ex.startedAt) / 1000);
  if (ex.clientLeft) model.stats.disconnected.inc();
  if (ex.pauses > 0) model.stats.backpressurePauses.inc(ex.pauses);
}

function expire(ex: UwsExchange, timeoutMs: number, format: ErrorFormat): void {
  const err = new ApiError(504, `the request did not finish within the server's limit of ${timeoutMs / 1000} s`, { type: 'internal_error', code: 'request_timeout' });
  // A timer callback: an exception here would be uncaught and end the process.
  try {
    expireWith(ex, err, format);
  } catch (e) {
    log.error('could not answer a request past its deadline', { request_id: ex.requestId, error: String(e) });
  }
}

function paramCount(path: string): number {
  return path.split('/').filter((seg) => seg.startsWith(':')).length;
}

function logRequest(ex: UwsExchange, r: Route): void {
  log.info('request', {
    request_id: ex.requestId,
    engine_request_id: ex.engineIdForLog,
    method: r.method.toUpperCase(),
    path: r.path,
    model: ex.model?.name,
    stream: ex.stream,
    status: ex.clientLeft && ex.status === 0 ? 499 : ex.status,
    client_left: ex.clientLeft || undefined,
    ms: Math.round((performance.now() - ex.startedAt) * 1000) / 1000,
  });
}

function authorized(ex: UwsExchange, keys: readonly Buffer[]): boolean {
  const auth = ex.header('authorization');
  const given = auth.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : ex.header('x-api-key');
  const b = Buffer.from(given);
  let ok = false;
  // Every key is compared (no early exit), so the time does not tell which one matched.
  for (const key of keys) ok = (b.length === key.length && timingSafeEqual(b, key)) || ok;
  return ok;
}

/** The headers of the request being read, as [name, value, name, value, ...] (see collectHeader). */
let collecting: string[] = [];
function collectHeader(k: string, v: string): void {
  collecting.push(k, v);
}

function exchangeFor(res: HttpResponse, req: HttpRequest): UwsExchange {
  // A flat list filled by a function made once: no Map and no closure per request (a
  // request has a handful of headers; lookups scan them).
  const headers: string[] = (collecting = []);
  req.forEach(collectHeader);
  const given = headerIn(headers, 'x-request-id');
  const id = given && REQUEST_ID_RE.test(given) ? given : randomUuid();
  const ex = new UwsExchange(res, headers, id);
  ex.query = req.getQuery() ?? '';
  res.onAborted(() => {
    try {
      ex.clientGone();
    } catch (err) {
      log.error('error in the end-of-request bookkeeping of a request whose client left', { request_id: ex.requestId, error: String(err), stack: err instanceof Error ? err.stack : undefined });
    }
  });
  return ex;
}

/**
 * Run a uWS route callback so that nothing it throws ends the process: an exception
 * becomes a 500 for that request, logged with its request id. (An exception escaping a
 * uWS callback is uncaught, and a handler that returns without answering or attaching
 * onAborted makes uWS abort the process.)
 */
function guarded(res: HttpResponse, req: HttpRequest, format: ErrorFormat, serve: (ex: UwsExchange) => void): void {
  let ex: UwsExchange | null = null;
  try {
    ex = exchangeFor(res, req);
    serve(ex);
  } catch (err) {
    if (ex) {
      fail(ex, err, format);
      return;
    }
    log.error('request failed before it was read', { error: String(err), stack: err instanceof Error ? err.stack : undefined });
    sendErrorToResponse(res, ApiError.from(err), format);
  }
}

/**
 * Where a POST body goes once read (or when it grows too large). A class, not an object
 * literal: a literal with a getter defines its accessor through a V8 runtime call on every
 * request.
 */
class ExchangeBodySink implements BodySink {
  constructor(
    private readonly ex: UwsExchange,
    private readonly maxBody: number,
    private readonly format: ErrorFormat,
    private readonly handler: Handler,
  ) {}

  get done(): boolean {
    return this.ex.done;
  }

  body(body: Buffer): void {
    this.ex.body = body;
    run(this.ex, this.handler, this.format);
  }

  tooLarge(): void {
    this.ex.refuseBody(413, errorBody(new ApiError(413, `request body is larger than the limit of ${this.maxBody} bytes`, { code: 'payload_too_large' }), this.format));
  }

  dropped(cut: boolean): void {
    this.ex.endRefusal(cut);
  }

  failed(err: unknown): void {
    fail(this.ex, err, this.format);
  }
}

function bodySink(ex: UwsExchange, maxBody: number, format: ErrorFormat, handler: Handler): BodySink {
  return new ExchangeBodySink(ex, maxBody, format, handler);
}

/** Answer 413 at once, drop the body the client is still sending, then close. */
function refuseBody(ex: UwsExchange, res: HttpResponse, err: ApiError, format: ErrorFormat): void {
  ex.refuseBody(err.status, errorBody(err, format));
  dropBody(res, { dropped: (cut: boolean) => ex.endRefusal(cut), failed: (e: unknown) => log.error('error while dropping a refused body', { request_id: ex.requestId, error: String(e) }) });
}

function run(ex: UwsExchange, handler: Handler, format: ErrorFormat): void {
  let p: void | Promise<void>;
  try {
    p = handler(ex);
  } catch (err) {
    fail(ex, err, format);
    return;
  }
  if (p) p.catch((err: unknown) => fail(ex, err, format));
}

function fail(ex: UwsExchange, err: unknown, format: ErrorFormat): void {
  // A request whose client has gone failed because its work was aborted: nothing to answer.
  if (ex.done) return;
  const e = ApiError.from(err);
  if (e.status >= 500) log.error('request failed', { request_id: ex.requestId, engine_request_id: ex.engineIdForLog, status: e.status, error: e.message, detail: e.detail, stack: e.status === 500 && err instanceof Error ? err.stack : undefined });
  else log.debug('request rejected', { request_id: ex.requestId, status: e.status, error: e.message, detail: e.detail });
  // Router queue rejections and engine 503s say when to retry (ApiError.retryAfter, seconds).
  sendError(ex, e, format);
}


