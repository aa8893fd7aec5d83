// The uWebSockets.js HTTP server: routes, body reading with a size limit, request ids,
// API-key checks, the concurrency limit, graceful drain, and the one place where a
// thrown error becomes an HTTP response.

import { randomUUID, timingSafeEqual } from 'node:crypto';
import { uws, type HttpRequest, type HttpResponse, type us_listen_socket } from './uws.js';
import { UwsExchange, headerIn, type ExchangeOwner } from './exchange.js';
import { ApiError, errorBody, type ErrorFormat } from '../protocol/errors.js';
import type { Handler, Route } from '../api/exchange.js';
import type { FrontendMetrics } from '../metrics/frontend.js';
import { log } from '../log.js';

export interface HttpServerOptions {
  host?: string;
  port: number;
  routes: Route[];
  maxBodyBytes?: number;
  /** Require this key (Bearer or x-api-key) on every route not marked public. */
  apiKey?: string;
  /** Generation requests in flight before new ones get a 503; 0 or undefined: no limit. */
  maxConcurrentRequests?: number;
  /** Where request counts, durations and disconnects are recorded. */
  metrics?: FrontendMetrics;
  /** Log one line per finished request. */
  logRequests?: boolean;
  /** Longest a generation request may run, in ms (0 or undefined: no limit); then 504 / an error event. */
  requestTimeoutMs?: number;
  /** Origins allowed to call the API from a browser ('*' for any); empty: no CORS headers. */
  corsOrigins?: readonly string[];
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
const REQUEST_ID_RE = /^[\x21-\x7e]{1,128}$/;

export function startHttpServer(opts: HttpServerOptions): Promise<HttpServer> {
  const app = uws.App();
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const live = new Set<UwsExchange>();
  let generating = 0;
  let draining = false;
  const key = opts.apiKey ? Buffer.from(opts.apiKey) : null;
  const limit = opts.maxConcurrentRequests ?? 0;
  const timeoutMs = opts.requestTimeoutMs ?? 0;

  const cors = opts.corsOrigins ?? [];
  const allowOrigin = (origin: string): string | null => {
    if (!origin || cors.length === 0) return null;
    if (cors.includes('*')) return '*';
    return cors.includes(origin) ? origin : null;
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
        if (ex.timer) clearTimeout(ex.timer);
      }
      if (opts.metrics) record(opts.metrics, ex, r.path);
      if (opts.logRequests) logRequest(ex, r);
    },
  };

  const begin = (res: HttpResponse, req: HttpRequest, r: Route, params: number, format: ErrorFormat): UwsExchange | null => {
    const ex = exchangeFor(res, req);
    for (let i = 0; i < params; i++) ex.params.push(decodeURIComponent(req.getParameter(i)));
    if (cors.length > 0) ex.corsOrigin = allowOrigin(ex.header('origin'));
    live.add(ex);
    ex.countsInflight = r.generation === true;
    ex.route = r;
    ex.owner = owner;
    if (key && !r.public && !authorized(ex, key)) {
      const err = new ApiError(401, 'Incorrect or missing API key: send it as "Authorization: Bearer <key>"', { code: 'invalid_api_key' });
      ex.sendJson(401, errorBody(err, format), false, [['www-authenticate', 'Bearer']]);
      return null;
    }
    if (r.generation) {
      if (draining) {
        const err = new ApiError(503, 'the server is shutting down', { type: 'service_unavailable', code: 'shutting_down' });
        ex.sendJson(503, errorBody(err, format), true);
        return null;
      }
      if (limit > 0 && generating >= limit) {
        const err = new ApiError(503, `the server is at its limit of ${limit} concurrent requests; retry shortly`, { type: 'service_unavailable', code: 'too_many_requests' });
        ex.sendJson(503, errorBody(err, format), false, [['retry-after', '1']]);
        return null;
      }
      generating++;
      ex.countsAsGenerating = true;
      if (timeoutMs > 0) ex.timer = setTimeout(expire, timeoutMs, ex, timeoutMs, format);
    }
    return ex;
  };

  for (const r of opts.routes) {
    const format = r.errors ?? 'openai';
    const params = paramCount(r.path);
    if (r.method === 'post') {
      app.post(r.path, (res, req) => {
        const ex = begin(res, req, r, params, format);
        if (ex) readBody(ex, res, maxBody, format, r.handler);
      });
    } else {
      const handle = (res: HttpResponse, req: HttpRequest) => {
        const ex = begin(res, req, r, params, format);
        if (ex) run(ex, r.handler, format);
      };
      if (r.method === 'get') app.get(r.path, handle);
      else app.del(r.path, handle);
    }
  }
  if (cors.length > 0) {
    app.options('/*', (res, req) => {
      const origin = allowOrigin(req.getHeader('origin'));
      res.cork(() => {
        res.writeStatus('204 No Content');
        if (origin) {
          res
            .writeHeader('access-control-allow-origin', origin)
            .writeHeader('vary', 'Origin')
            .writeHeader('access-control-allow-methods', 'GET, POST, OPTIONS')
            .writeHeader('access-control-allow-headers', req.getHeader('access-control-request-headers') || 'authorization, content-type, x-api-key, x-request-id')
            .writeHeader('access-control-max-age', '600');
        }
        res.end();
      });
    });
  }
  app.any('/*', (res, req) => {
    const ex = exchangeFor(res, req);
    const err = new ApiError(404, `no route for ${req.getMethod().toUpperCase()} ${req.getUrl()}`, { code: 'not_found' });
    ex.sendJson(404, JSON.stringify(err.toOpenAI()));
  });

  return new Promise((resolve, reject) => {
    app.listen(opts.host ?? '0.0.0.0', opts.port, (sock: us_listen_socket | false) => {
      if (!sock) {
        reject(new Error(`cannot listen on ${opts.host ?? '0.0.0.0'}:${opts.port}`));
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
          // No App.close(): called right after a burst of requests it aborted the process
          // with std::bad_alloc (issue 8). Idle keep-alive connections stay open until the
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
  const status = ex.clientLeft && ex.status === 0 ? '499' : String(ex.status);
  m.requests.labels(model?.name ?? '', endpoint, ex.stream ? 'stream' : 'unary', status).inc();
  if (!model) return;
  model.stats.duration.observe((performance.now() - ex.startedAt) / 1000);
  if (ex.clientLeft) model.stats.disconnected.inc();
  if (ex.pauses > 0) model.stats.backpressurePauses.inc(ex.pauses);
}

function expire(ex: UwsExchange, timeoutMs: number, format: ErrorFormat): void {
  const err = new ApiError(504, `the request did not finish within the server's limit of ${timeoutMs / 1000} s`, { type: 'internal_error', code: 'request_timeout' });
  const body = errorBody(err, format);
  ex.expire(504, body, format === 'anthropic' ? `event: error\ndata: ${body}\n\n` : `event: error\ndata: ${body}\n\ndata: [DONE]\n\n`);
}

function paramCount(path: string): number {
  return path.split('/').filter((seg) => seg.startsWith(':')).length;
}

function logRequest(ex: UwsExchange, r: Route): void {
  log.info('request', {
    request_id: ex.requestId,
    method: r.method.toUpperCase(),
    path: r.path,
    model: ex.model?.name,
    stream: ex.stream,
    status: ex.clientLeft && ex.status === 0 ? 499 : ex.status,
    client_left: ex.clientLeft || undefined,
    ms: Math.round((performance.now() - ex.startedAt) * 1000) / 1000,
  });
}

function authorized(ex: UwsExchange, key: Buffer): boolean {
  const auth = ex.header('authorization');
  const given = auth.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : ex.header('x-api-key');
  const b = Buffer.from(given);
  return b.length === key.length && timingSafeEqual(b, key);
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
  const id = given && REQUEST_ID_RE.test(given) ? given : randomUUID();
  const ex = new UwsExchange(res, headers, id);
  res.onAborted(() => ex.clientGone());
  return ex;
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
  if (e.status >= 500) log.error('request failed', { request_id: ex.requestId, status: e.status, error: e.message, detail: e.detail, stack: e.status === 500 && err instanceof Error ? err.stack : undefined });
  else log.debug('request rejected', { request_id: ex.requestId, status: e.status, error: e.message, detail: e.detail });
  // Router queue rejections and engine 503s say when to retry (ApiError.retryAfter, seconds).
  const retryAfter = e.retryAfter;
  ex.sendJson(e.status, errorBody(e, format), false, typeof retryAfter === 'number' ? [['retry-after', String(retryAfter)]] : []);
}

function readBody(ex: UwsExchange, res: HttpResponse, maxBody: number, format: ErrorFormat, handler: Handler): void {
  const declared = Number(ex.header('content-length') || '0');
  if (declared > maxBody) {
    tooLarge(ex, maxBody, format);
    return;
  }
  // Preallocate when the length is declared; otherwise (chunked) grow as data comes.
  let buf = Buffer.allocUnsafe(declared);
  let len = 0;
  res.onData((chunk, isLast) => {
    if (ex.done) return;
    const n = chunk.byteLength;
    if (len + n > maxBody) {
      tooLarge(ex, maxBody, format);
      return;
    }
    if (len + n > buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(len + n, buf.length * 2));
      buf.copy(grown, 0, 0, len);
      buf = grown;
    }
    // uWS reuses the chunk's memory after this callback: copy it out now.
    buf.set(new Uint8Array(chunk), len);
    len += n;
    if (isLast) {
      ex.body = len === buf.length ? buf : buf.subarray(0, len);
      run(ex, handler, format);
    }
  });
}

function tooLarge(ex: UwsExchange, maxBody: number, format: ErrorFormat): void {
  const err = new ApiError(413, `request body is larger than the limit of ${maxBody} bytes`, { code: 'payload_too_large' });
  ex.sendJson(413, errorBody(err, format), true);
}
