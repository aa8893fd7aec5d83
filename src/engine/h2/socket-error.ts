// A socket failure as the ConnectError a gRPC client reports for it (the codes connect-node
// gives them): refused, unreachable or timed out is Unavailable, a reset Aborted.

import { Code, ConnectError } from '@connectrpc/connect';

export function socketError(err: unknown): ConnectError {
  const codes: string[] = [];
  for (let e: unknown = err, i = 0; e instanceof Error && i < 8; e = (e as { cause?: unknown }).cause, i++) {
    const c = (e as { code?: unknown }).code;
    if (typeof c === 'string') codes.push(c);
  }
  let code = Code.Internal;
  if (codes.some((c) => c === 'ECONNREFUSED' || c === 'ETIMEDOUT' || c === 'ENOTFOUND' || c === 'EAI_AGAIN' || c === 'EHOSTUNREACH' || c === 'ENETUNREACH' || c === 'EPIPE')) {
    code = Code.Unavailable;
  } else if (codes.some((c) => c === 'ECONNRESET')) {
    code = Code.Aborted;
  }
  const ce = ConnectError.from(err, code);
  if (ce !== err) ce.cause = err;
  return ce;
}
