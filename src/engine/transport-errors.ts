// Socket and HTTP/2 failures as the ConnectErrors a gRPC client reports for them: what the
// engine client's transports (src/engine/h2/, grpc-h2.ts) fail their streams with.

import { Code, ConnectError } from '@connectrpc/connect';

/** Node / HTTP/2 failure → ConnectError, with the codes connect-node gives the same failures. */
export function fromNodeError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const codes: string[] = [];
  for (let e: unknown = err, i = 0; e instanceof Error && i < 8; e = (e as { cause?: unknown }).cause, i++) {
    const c = (e as { code?: unknown }).code;
    if (typeof c === 'string') codes.push(c);
  }
  let code = Code.Internal;
  if (codes.some((c) => c === 'ECONNREFUSED' || c === 'ETIMEDOUT' || c === 'ENOTFOUND' || c === 'EAI_AGAIN' || c === 'EHOSTUNREACH' || c === 'ENETUNREACH')) {
    code = Code.Unavailable;
  } else if (codes.some((c) => c === 'ECONNRESET' || c === 'ERR_STREAM_DESTROYED' || c === 'ERR_HTTP2_INVALID_STREAM' || c === 'ERR_HTTP2_STREAM_ERROR')) {
    code = Code.Aborted;
  } else if (codes.some((c) => c === 'EPIPE')) {
    code = Code.Unavailable;
  }
  // ERR_HTTP2_SESSION_ERROR (the worker sent GOAWAY with an error code) stays
  // Internal, as connect-node reports it: the next request reconnects, so
  // the worker should not be marked down for it.
  const ce = ConnectError.from(err, code);
  if (ce !== err) ce.cause = err;
  return ce;
}
