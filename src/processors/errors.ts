// The errors a processor raises (and receives from the routed engine), and the one mapping
// from them to what the client gets (spec 002 "Errors"):
//   InvalidArgument(message)   400, `message` shown
//   HttpError(code, message)   `code` for a 4xx, 503 or 529; 500 for any other 5xx (and for a
//                              code outside 400-599); the body carries the status's standard
//                              text, `message` is logged only
//   RoutedEngineError          the status the worker's error maps to (engine-errors.ts)
//   anything else              500, logged

import { STATUS_CODES } from 'node:http';
import { ApiError } from '../protocol/errors.js';
import { HttpError, InvalidArgument, RoutedEngineError } from './public-errors.js';

export { HttpError, InvalidArgument, RoutedEngineError };

/** An ApiError from Portico's pipeline as the routed engine raises it to a processor. */
export function routedFailure(e: ApiError): RoutedEngineError | InvalidArgument {
  if (e.status === 400) return new InvalidArgument(e.message);
  return new RoutedEngineError(e.message, e.status, e.code, e.retryAfter);
}

/** The status text without its number ("Service Unavailable"). */
function standardText(status: number): string {
  return status === 529 ? 'Site Overloaded' : (STATUS_CODES[status] ?? 'Error');
}

/** Whatever a processor threw, as the client's error; `detail` (logged) keeps the processor's own words. */
export function processorFailure(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof InvalidArgument) return ApiError.badRequest(err.message);
  if (err instanceof HttpError) {
    const c = err.code;
    const status = Number.isInteger(c) && ((c >= 400 && c < 500) || c === 503 || c === 529) ? c : 500;
    return new ApiError(status, standardText(status), { detail: `processor HttpError(${String(c)}): ${err.message}` });
  }
  if (err instanceof RoutedEngineError) {
    return new ApiError(err.status, err.message, { code: err.errorCode, retryAfter: err.retryAfter, detail: 'raised by the routed engine' });
  }
  const msg = err instanceof Error ? err.message : String(err);
  return new ApiError(500, standardText(500), { type: 'internal_error', detail: `processor error: ${msg}`, cause: err });
}
