// One error type for every failure a client can see, and one mapping from it to
// the OpenAI error body and an HTTP status. Anything thrown anywhere on the request
// path is normalised with ApiError.from().

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

  constructor(status: number, message: string, opts: { type?: ErrorType; code?: string | null; param?: string | null } = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = opts.type ?? defaultType(status);
    this.code = opts.code ?? null;
    this.param = opts.param ?? null;
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

  /** Normalise anything thrown into an ApiError; unknown errors become 500s. */
  static from(err: unknown): ApiError {
    if (err instanceof ApiError) return err;
    const maybe = err as { apiStatus?: number; message?: string; code?: unknown } | null;
    if (maybe && typeof maybe.apiStatus === 'number') {
      return new ApiError(maybe.apiStatus, String(maybe.message), { code: typeof maybe.code === 'string' ? maybe.code : null });
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

export type ErrorFormat = 'openai' | 'anthropic';

/** The error body in the API family's own shape. */
export function errorBody(err: ApiError, format: ErrorFormat): string {
  return JSON.stringify(format === 'anthropic' ? err.toAnthropic() : err.toOpenAI());
}
