// The uWebSockets.js HTTP server: routes, body reading with a size limit, request
// ids, and one place where a thrown error becomes an HTTP response.

import { randomUUID } from 'node:crypto';
import { uws, type HttpRequest, type HttpResponse, type us_listen_socket } from './uws.js';
import { UwsExchange } from './exchange.js';
import { ApiError, errorBody, type ErrorFormat } from '../protocol/errors.js';
import type { Handler, Route } from '../api/exchange.js';

export interface HttpServerOptions {
  host?: string;
  port: number;
  routes: Route[];
  maxBodyBytes?: number;
}

export interface HttpServer {
  readonly port: number;
  close(): void;
}

const DEFAULT_MAX_BODY = 45 * 1024 * 1024;
const REQUEST_ID_RE = /^[\x21-\x7e]{1,128}$/;

export function startHttpServer(opts: HttpServerOptions): Promise<HttpServer> {
  const app = uws.App();
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
  for (const r of opts.routes) {
    const format = r.errors ?? 'openai';
    const handle = r.method === 'post' ? withBody(r.handler, maxBody, format) : withoutBody(r.handler, format);
    app[r.method](r.path, handle);
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
      resolve({
        port: uws.us_socket_local_port(sock),
        close: () => uws.us_listen_socket_close(sock),
      });
    });
  });
}

function exchangeFor(res: HttpResponse, req: HttpRequest): UwsExchange {
  const headers = new Map<string, string>();
  req.forEach((k, v) => headers.set(k, v));
  const given = headers.get('x-request-id');
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
  const e = ApiError.from(err);
  if (e.status >= 500 && e.type === 'internal_error') console.error(`[${ex.requestId}]`, err);
  ex.sendJson(e.status, errorBody(e, format));
}

function withoutBody(handler: Handler, format: ErrorFormat) {
  return (res: HttpResponse, req: HttpRequest) => run(exchangeFor(res, req), handler, format);
}

function withBody(handler: Handler, maxBody: number, format: ErrorFormat) {
  return (res: HttpResponse, req: HttpRequest) => {
    const ex = exchangeFor(res, req);
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
      Buffer.from(chunk).copy(buf, len);
      len += n;
      if (isLast) {
        ex.body = len === buf.length ? buf : buf.subarray(0, len);
        run(ex, handler, format);
      }
    });
  };
}

function tooLarge(ex: UwsExchange, maxBody: number, format: ErrorFormat): void {
  const err = new ApiError(413, `request body is larger than the limit of ${maxBody} bytes`, { code: 'payload_too_large' });
  ex.sendJson(413, errorBody(err, format), true);
}
