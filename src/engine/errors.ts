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

export class EngineError extends Error {
  override readonly name = 'EngineError';
  readonly code: EngineErrorCode;
  /** Worker URL the failure happened on. */
  readonly url: string;
  constructor(code: EngineErrorCode, message: string, url: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.url = url;
  }

  /** Normalise anything thrown by the transport (or by us) into an EngineError. */
  static from(err: unknown, url: string, what: string): EngineError {
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
    return new EngineError(code, msg, url, { cause: err });
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
