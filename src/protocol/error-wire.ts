// Every error a client reads is an ApiError (errors.ts) written by one function per wire
// format, here and nowhere else:
//   errorBody      HTTP JSON: OpenAI {"error":{message,type,param,code}}, Anthropic {"type":"error",...}
//   errorEvent     SSE `event: error` of the OpenAI (chat, completions) and Anthropic streams
//   streamErrorEnd that event and the stream's end (`data: [DONE]` for OpenAI), for a stream cut short
//   responsesError the fields of the Responses stream's `error` event (its writer numbers it)
//   grpcError      the gRPC status (code and message) for the KServe face
// The HTTP layer adds the status and Retry-After from the same ApiError (http/error-response.ts).

import { Code, ConnectError } from '@connectrpc/connect';
import { ApiError } from './errors.js';
import { SSE_DONE } from './sse-frames.js';

export type ErrorFormat = 'openai' | 'anthropic';

/** The error body in the API family's own shape. */
export function errorBody(err: ApiError, format: ErrorFormat): string {
  return JSON.stringify(format === 'anthropic' ? err.toAnthropic() : err.toOpenAI());
}

/** The SSE error event of an OpenAI or Anthropic stream (its body as errorBody's). */
export function errorEvent(err: ApiError, format: ErrorFormat): string {
  return `event: error\ndata: ${errorBody(err, format)}\n\n`;
}

/** The last text of an OpenAI or Anthropic stream that an error ends: the error event, then OpenAI's `data: [DONE]`. */
export function streamErrorEnd(err: ApiError, format: ErrorFormat): string {
  return format === 'anthropic' ? errorEvent(err, format) : errorEvent(err, format) + SSE_DONE;
}

/** The Responses API's `error` stream event fields (the writer adds type and sequence_number). */
export function responsesError(err: ApiError): { code: string | null; message: string; param: string | null } {
  return { code: err.code, message: err.message, param: err.param };
}

/** Anything thrown, as the gRPC status the KServe face answers with (a ConnectError passes as it is). */
export function grpcError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const e = ApiError.from(err);
  return new ConnectError(e.message, grpcCodeOf(e));
}

/**
 * The gRPC status for an error, for the KServe gRPC face: the usual HTTP-to-gRPC
 * correspondence (google.rpc.Code's documented HTTP mapping), with capacity answers
 * (429, 529, an overloaded engine's 503) as RESOURCE_EXHAUSTED.
 */
export function grpcCodeOf(err: ApiError): Code {
  if (err.code === 'engine_overloaded') return Code.ResourceExhausted;
  switch (err.status) {
    case 400:
    case 411:
    case 422:
      return Code.InvalidArgument;
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
      return Code.NotFound;
    case 405:
    case 501:
      return Code.Unimplemented;
    case 409:
      return Code.AlreadyExists;
    case 412:
      return Code.FailedPrecondition;
    case 413:
    case 429:
    case 431:
    case 529:
      return Code.ResourceExhausted;
    case 499:
      return Code.Canceled;
    case 503:
      return Code.Unavailable;
    case 504:
      return Code.DeadlineExceeded;
    case 500:
      return Code.Internal;
    default:
      return err.status >= 500 ? Code.Unknown : err.status >= 400 ? Code.InvalidArgument : Code.Unknown;
  }
}
