// Who may call the operator endpoints (routes marked `admin`) and the metrics scrape
// (`metrics`), checked once per request in the HTTP layer, before the body is read, on
// the shard that received the request (a change reaches the other shards only after).
//
//   admin routes, --admin-api-key set   the admin key (Bearer or x-api-key), else 401;
//                                       it replaces --api-key on these routes
//   admin routes, no admin key          a loopback client (127.0.0.0/8, ::1, ::ffff:127.x)
//                                       sent by no browser page (no Origin header), else
//                                       403; --api-key still applies when set
//   admin POST (and DELETE with a body) Content-Type application/json, else 415: an HTML
//                                       form or a text/plain fetch from another origin is
//                                       sent by browsers without a CORS preflight (CSRF)
//   /metrics, --metrics-api-key set     the metrics key, else 401
//
// The peer address is uWS's binary one (4 bytes, or 16 on a dual-stack socket, where an
// IPv4 client is ::ffff:a.b.c.d); a proxy in front makes every client look like the
// proxy, so behind one set --admin-api-key (docs/serving.md).

import { timingSafeEqual } from 'node:crypto';
import type { HttpResponse } from './uws.js';
import type { UwsExchange } from './exchange.js';
import type { Route } from '../api/exchange.js';
import { ApiError } from '../protocol/errors.js';
import type { ErrorFormat } from '../protocol/error-wire.js';
import { sendError } from './error-response.js';
import { log } from '../log.js';

export interface AccessOptions {
  adminApiKey?: string;
  metricsApiKey?: string;
}

/** What the check decided: refused (answered already), granted by its own key (skip --api-key), or go on. */
export const REFUSED = 0;
export const GRANTED = 1;
export const PASS = 2;
export type AccessVerdict = typeof REFUSED | typeof GRANTED | typeof PASS;

export type AccessCheck = (ex: UwsExchange, res: HttpResponse, r: Route, format: ErrorFormat) => AccessVerdict;

export function accessCheck(o: AccessOptions): AccessCheck {
  const adminKey = o.adminApiKey ? Buffer.from(o.adminApiKey) : null;
  const metricsKey = o.metricsApiKey ? Buffer.from(o.metricsApiKey) : null;
  return (ex, res, r, format) => {
    if (r.metrics) {
      if (!metricsKey) return PASS;
      if (keyGiven(ex, metricsKey)) return GRANTED;
      return refuse(ex, format, 401, 'Incorrect or missing metrics API key: send it as "Authorization: Bearer <key>"', 'invalid_api_key');
    }
    if (!r.admin) return PASS;
    let verdict: AccessVerdict = PASS;
    if (adminKey) {
      if (!keyGiven(ex, adminKey)) return refuse(ex, format, 401, 'Incorrect or missing admin API key: send it as "Authorization: Bearer <key>"', 'invalid_api_key');
      verdict = GRANTED;
    } else {
      const peer = new Uint8Array(res.getRemoteAddress());
      if (!isLoopback(peer)) {
        log.debug('admin request refused: not from loopback and no --admin-api-key is set', { request_id: ex.requestId, path: r.path, peer: Buffer.from(res.getRemoteAddressAsText()).toString() });
        return refuse(ex, format, 403, 'the admin API only answers loopback clients unless the server is started with --admin-api-key', 'admin_forbidden');
      }
      if (ex.header('origin') !== '') {
        return refuse(ex, format, 403, 'the admin API does not answer browser pages (an Origin header) unless the server is started with --admin-api-key', 'admin_forbidden');
      }
    }
    if (r.method !== 'get' && !jsonContentType(ex.header('content-type'), r.method === 'post')) {
      return refuse(ex, format, 415, 'the admin API takes only "Content-Type: application/json"', 'unsupported_media_type');
    }
    return verdict;
  };
}

/** A loopback peer: 127.0.0.0/8, ::1, or 127.0.0.0/8 mapped into IPv6 (::ffff:127.x.y.z). */
export function isLoopback(addr: Uint8Array): boolean {
  if (addr.length === 4) return addr[0] === 127;
  if (addr.length !== 16) return false;
  for (let i = 0; i < 10; i++) if (addr[i] !== 0) return false;
  if (addr[10] === 0xff && addr[11] === 0xff) return addr[12] === 127;
  for (let i = 10; i < 15; i++) if (addr[i] !== 0) return false;
  return addr[15] === 1;
}

/** application/json (parameters such as charset allowed); an absent type only where no body is required. */
export function jsonContentType(value: string, required: boolean): boolean {
  if (value === '') return !required;
  const semi = value.indexOf(';');
  return (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

function keyGiven(ex: UwsExchange, key: Buffer): boolean {
  const auth = ex.header('authorization');
  const given = Buffer.from(auth.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : ex.header('x-api-key'));
  return given.length === key.length && timingSafeEqual(given, key);
}

function refuse(ex: UwsExchange, format: ErrorFormat, status: number, message: string, code: string): AccessVerdict {
  sendError(ex, new ApiError(status, message, { code }), format);
  return REFUSED;
}
