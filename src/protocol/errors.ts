// One error type for every failure a client can see. Anything thrown anywhere on the
// request path is normalised with ApiError.from(), engine failures included (engine-errors.ts
// decides their status and message); error-wire.ts writes it in each wire format (OpenAI and
// Anthropic JSON, SSE error events, the gRPC status).

import { EngineError } from '../engine/errors.js';
import { engineFailure, type EngineOp } from './engine-errors.js';

export type ErrorType =
  | 'invalid_request_error'
  | 'not_found_error'
  | 'authentication_error'
  | 'permission_error'
  | 'rate_limit_error'
  | 'service_unavailable'
  | 'internal_error';

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  409: '409 Conflict',
  411: '411 Length Required',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  417: '417 Expectation Failed',
  422: '422 Unprocessable Entity',
  429: '429 Too Many Requests',
  431: '431 Request Header Fields Too Large',
  500: '500 Internal Server Error',
  501: '501 Not Implemented',
  502: '502 Bad Gateway',
  503: '503 Service Unavailable',
  504: '504 Gateway Timeout',
  529: '529 Site Overloaded',
};

export function statusLine(status: number): string {
  return STATUS_TEXT[status] ?? `${status} Status`;
}

export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string | null;
  readonly param: string | null;
  /** Seconds for the Retry-After header (a 503 or 529 that says when to come back). */
  readonly retryAfter: number | undefined;
  /**
   * What the log gets beside the client's message: the internal detail (worker URL, engine
   * request id, the engine's words). Never written to a client.
   */
  readonly detail: string | undefined;

  constructor(
    status: number,
    message: string,
    opts: { type?: ErrorType; code?: string | null; param?: string | null; retryAfter?: number; detail?: string; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ApiError';
    this.status = status;
    this.type = opts.type ?? defaultType(status);
    this.code = opts.code ?? null;
    this.param = opts.param ?? null;
    this.retryAfter = opts.retryAfter;
    this.detail = opts.detail;
  }

  /** An engine failure as the client sees it (the mapping is engine-errors.ts). */
  static fromEngine(err: EngineError, op: EngineOp = 'generate'): ApiError {
    const f = engineFailure(err, op);
    return new ApiError(f.status, f.message, { type: f.type, code: f.code, param: f.param, retryAfter: f.retryAfter, detail: err.message, cause: err });
  }

  static badRequest(message: string, param: string | null = null, code: string | null = null): ApiError {
    return new ApiError(400, message, { param, code });
  }

  static notFound(message: string, param: string | null = null, code: string | null = null): ApiError {
    return new ApiError(404, message, { type: 'not_found_error', param, code });
  }

  static unavailable(message: string, code: string | null = null): ApiError {
    return new ApiError(503, message, { type: 'service_unavailable', code });
  }

  /**
   * Normalise anything thrown into an ApiError (engine failures by engine-errors.ts, for the
   * operation `op` asked of the engine); unknown errors become 500s.
   */
  static from(err: unknown, op: EngineOp = 'generate'): ApiError {
    if (err instanceof ApiError) return err;
    if (err instanceof EngineError) return ApiError.fromEngine(err, op);
    const maybe = err as { apiStatus?: number; message?: string; code?: unknown; param?: unknown; retryAfter?: unknown } | null;
    if (maybe && typeof maybe.apiStatus === 'number') {
      return new ApiError(maybe.apiStatus, String(maybe.message), {
        code: typeof maybe.code === 'string' ? maybe.code : null,
        param: typeof maybe.param === 'string' ? maybe.param : null,
        retryAfter: typeof maybe.retryAfter === 'number' ? maybe.retryAfter : undefined,
      });
    }
    const message = err instanceof Error ? err.message : String(err);
    return new ApiError(500, `internal error: ${message}`, { type: 'internal_error' });
  }

  /** The Anthropic error body: {"type":"error","error":{"type","message"}}. */
  toAnthropic(): { type: 'error'; error: { type: string; message: string } } {
    return { type: 'error', error: { type: anthropicType(this.status), message: this.message } };
  }

  /** The OpenAI error body: {"error":{"message","type","param","code"}}. */
  toOpenAI(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

function defaultType(status: number): ErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429 || status === 529) return 'rate_limit_error';
  if (status === 503) return 'service_unavailable';
  if (status >= 500) return 'internal_error';
  return 'invalid_request_error';
}

function anthropicType(status: number): string {
  switch (status) {
    case 400:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
    case 503:
      return 'overloaded_error';
    default:
      return 'api_error';
  }
}
