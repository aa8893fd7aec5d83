// The one error type of the engine layer. Callers map `code` to HTTP/gRPC
// status in one place (src/protocol); nothing above src/engine sees
// transport-specific errors.
import { Code, ConnectError } from '@connectrpc/connect';

export type EngineErrorCode =
  | 'unavailable' // worker unreachable, connection refused/reset, connect timeout
  | 'aborted' // cancelled by Portico (client went away) or by the worker
  | 'timeout' // deadline exceeded
  | 'overloaded' // worker refused for capacity
  | 'invalid_argument' // worker rejected the request
  | 'unimplemented' // worker lacks the rpc
  | 'internal'; // anything else, including protocol violations

/**
 * What a failure says about the worker's health (src/router/worker-pool.ts acts on it):
 *  - 'disconnected': the connection is gone (refused, closed mid-stream, GOAWAY): out of
 *    rotation at once, and its health is checked again right away (a connection that one
 *    request's GOAWAY closed reconnects, a dead worker stays out);
 *  - 'down': the worker did not answer a request at all within the first-response deadline:
 *    out of rotation until its next scheduled health check passes;
 *  - 'strike': one stream failed in a way that may be the worker's (reset, internal error,
 *    deadline): counts toward the pool's failure breaker, never marks it down alone;
 *  - 'none': the request's own fault or a capacity answer (invalid argument, overloaded,
 *    unimplemented, cancelled by Portico).
 */
export type WorkerHealthSignal = 'disconnected' | 'down' | 'strike' | 'none';

export class EngineError extends Error {
  override readonly name = 'EngineError';
  readonly code: EngineErrorCode;
  /** Worker URL the failure happened on (for the log; never shown to a client). */
  readonly url: string;
  /** The engine's own words (gRPC status message), when it sent any. */
  readonly engineMessage: string;
  readonly health: WorkerHealthSignal;
  /** The engine request id, when known (kept out of what a client sees). */
  readonly requestId: string | undefined;
  constructor(code: EngineErrorCode, message: string, url: string, options?: { cause?: unknown; engineMessage?: string; health?: WorkerHealthSignal; requestId?: string }) {
    super(message, options);
    this.requestId = options?.requestId;
    this.code = code;
    this.url = url;
    this.engineMessage = options?.engineMessage ?? '';
    this.health = options?.health ?? defaultHealth(code);
  }

  /** Normalise anything thrown by the transport (or by us) into an EngineError. */
  static from(err: unknown, url: string, what: string, requestId?: string): EngineError {
    if (err instanceof EngineError) return err;
    const ce = ConnectError.from(err);
    const code = codeFromConnect(ce.code);
    const reason = ce.rawMessage || 'no detail';
    let msg: string;
    switch (code) {
      case 'unavailable':
        msg = `engine worker ${url} unreachable during ${what}: ${reason}`;
        break;
      case 'aborted':
        msg = `${what} on engine worker ${url} was aborted: ${reason}`;
        break;
      default:
        msg = `${what} on engine worker ${url} failed (${Code[ce.code]}): ${reason}`;
    }
    return new EngineError(code, msg, url, { cause: err, engineMessage: ce.rawMessage, requestId });
  }
}

function defaultHealth(code: EngineErrorCode): WorkerHealthSignal {
  switch (code) {
    case 'unavailable':
      return 'disconnected';
    case 'timeout':
    case 'internal':
      return 'strike';
    default:
      return 'none';
  }
}

function codeFromConnect(c: Code): EngineErrorCode {
  switch (c) {
    case Code.Unavailable:
      return 'unavailable';
    case Code.Canceled:
    case Code.Aborted:
      return 'aborted';
    case Code.DeadlineExceeded:
      return 'timeout';
    case Code.ResourceExhausted:
      return 'overloaded';
    case Code.InvalidArgument:
    case Code.FailedPrecondition:
    case Code.OutOfRange:
      return 'invalid_argument';
    case Code.Unimplemented:
      return 'unimplemented';
    default:
      return 'internal';
  }
}
