// The errors of the processor contract (spec 002 "Errors"), as authors import them from
// Portico's main entry point. No Portico internals here: this file is the public API.

/** Rejects the request with HTTP 400, showing `message` to the client. */
export class InvalidArgument extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidArgument';
  }
}

/**
 * Rejects the request with another status: the client gets `code` for a 4xx, 503 or 529,
 * and 500 for any other code, with the status's standard text; `message` is logged only.
 */
export class HttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * A worker's classified failure, as the routed engine raises it. Re-raised, or left to
 * escape, it gives the client `status`, the status the worker's error maps to.
 */
export class RoutedEngineError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** Portico's error code (engine_overloaded, worker_unavailable, engine_timeout, ...), if any. */
    readonly errorCode: string | null = null,
    /** Retry-After seconds, for a 503 or 529. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'RoutedEngineError';
  }
}
