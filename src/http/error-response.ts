// The one writer of an HTTP error response: status, body (error-wire.ts, in the route's API
// family's shape) and headers all from the ApiError. A 401 says how to authenticate; a
// Retry-After goes out when the error says when to come back (and on every 503 and 529,
// the exchange's default otherwise: UwsExchange.send).

import { log } from '../log.js';
import { statusLine, type ApiError } from '../protocol/errors.js';
import { errorBody, streamErrorEnd, type ErrorFormat } from '../protocol/error-wire.js';
import type { UwsExchange } from './exchange.js';
import type { HttpResponse } from './uws.js';

export function sendError(ex: UwsExchange, e: ApiError, format: ErrorFormat, closeConnection = false): void {
  try {
    ex.sendJson(e.status, errorBody(e, format), closeConnection, errorHeaders(e));
  } catch (err) {
    // Nothing more can be said on this connection; never let it end the process.
    log.error('could not send an error response', { request_id: ex.requestId, status: e.status, error: String(err) });
  }
}

/**
 * The error response of a request that has no exchange (it failed before one was made, or
 * it is an OPTIONS, which is answered without one): the same status, body and error headers
 * (WWW-Authenticate, the error's own Retry-After) as sendError, and the connection closed
 * (the request's state is unknown). What only an exchange adds is not there: x-request-id,
 * the CORS headers and the default Retry-After of a 503 or 529 (UwsExchange.send).
 */
export function sendErrorToResponse(res: HttpResponse, e: ApiError, format: ErrorFormat): void {
  try {
    res.cork(() => {
      res.writeStatus(statusLine(e.status)).writeHeader('content-type', 'application/json');
      for (const [k, v] of errorHeaders(e)) res.writeHeader(k, v);
      res.end(errorBody(e, format), true);
    });
  } catch (err) {
    log.error('could not send an error response', { status: e.status, error: String(err) });
  }
}

/** Answer a request past its deadline: the error response, or its stream's error event and end. */
export function expireWith(ex: UwsExchange, e: ApiError, format: ErrorFormat): void {
  ex.expire(e.status, errorBody(e, format), streamErrorEnd(e, format));
}

function errorHeaders(e: ApiError): [string, string][] {
  const headers: [string, string][] = [];
  if (e.status === 401) headers.push(['www-authenticate', 'Bearer']);
  const r = e.retryAfter;
  if (typeof r === 'number' && Number.isFinite(r) && r >= 0) headers.push(['retry-after', String(Math.ceil(r))]);
  return headers;
}
