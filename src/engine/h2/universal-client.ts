// Connect's transport for the engine's unary rpcs (health, loads, abort, info, embed, admin)
// on the engine client's own HTTP/2 connection: a UniversalClientFn (what
// `@connectrpc/connect/protocol-grpc`'s createTransport calls for each rpc) over H2Client,
// so one worker is one connection again and Connect keeps all of gRPC's framing, status,
// compression and deadline handling. What it adds: the request body is gathered (unary and
// server-streaming requests are one message) and sent with the call's headers; the response
// resolves at its headers, its body is the DATA frames in order, and its trailers fill
// `trailer` before the body ends (a trailers-only response leaves them in `header`, as
// connect-node's client does). An aborted signal resets the stream and rejects with the
// signal's reason (Connect's deadline or the caller's cancel).

import { ConnectError, type Transport } from '@connectrpc/connect';
import { compressionBrotli, compressionGzip } from '@connectrpc/connect-node';
import { validateReadWriteMaxBytes, type UniversalClientFn, type UniversalClientRequest, type UniversalClientResponse } from '@connectrpc/connect/protocol';
import { createTransport } from '@connectrpc/connect/protocol-grpc';

import type { H2Client } from './client.js';
import type { H2Stream, H2StreamHandler } from './session.js';

/** Connect's gRPC transport on `client`'s connection, with what createGrpcTransport would pass. */
export function h2GrpcTransport(client: H2Client, baseUrl: string): Transport {
  return createTransport({
    httpClient: h2UniversalClient(client),
    baseUrl,
    useBinaryFormat: true,
    interceptors: [],
    acceptCompression: [compressionGzip, compressionBrotli],
    sendCompression: null,
    ...validateReadWriteMaxBytes(undefined, undefined, undefined),
  });
}

export function h2UniversalClient(client: H2Client): UniversalClientFn {
  return async (req: UniversalClientRequest): Promise<UniversalClientResponse> => {
    const u = new URL(req.url);
    const headers: string[] = [];
    req.header.forEach((v, k) => {
      headers.push(k, v);
    });
    const parts: Uint8Array[] = [];
    if (req.body) for await (const c of req.body) parts.push(c);
    const body = parts.length === 1 ? Buffer.from(parts[0]!.buffer, parts[0]!.byteOffset, parts[0]!.byteLength) : Buffer.concat(parts);
    const signal = req.signal;
    if (signal?.aborted) throw reasonOf(signal);
    return new Promise((resolve, reject) => {
      const call = new UnaryCall(resolve, reject);
      call.stream = client.requestWithHeaders(u.pathname + u.search, headers, body, call);
      if (signal) {
        const onAbort = () => call.abort(reasonOf(signal));
        signal.addEventListener('abort', onAbort, { once: true });
        call.onDone = () => signal.removeEventListener('abort', onAbort);
      }
    });
  };
}

function reasonOf(signal: AbortSignal): unknown {
  return signal.reason ?? new ConnectError('the operation was aborted');
}

class UnaryCall implements H2StreamHandler {
  stream: H2Stream | undefined;
  onDone: (() => void) | undefined;
  private readonly header = new Headers();
  private readonly trailer = new Headers();
  /** The response (headers, then body and trailers as they come) was handed over. */
  private responded = false;
  private readonly chunks: Buffer[] = [];
  private over = false;
  private failure: unknown;
  private wake: (() => void) | undefined;

  constructor(
    private readonly resolve: (r: UniversalClientResponse) => void,
    private readonly reject: (e: unknown) => void,
  ) {}

  onHeaders(fields: string[], _endStream: boolean): void {
    const status = into(this.header, fields);
    this.responded = true;
    this.resolve({ status, header: this.header, body: this.body(), trailer: this.trailer });
  }

  onTrailers(fields: string[]): void {
    into(this.trailer, fields);
  }

  onData(buf: Buffer, start: number, end: number): void {
    this.chunks.push(Buffer.from(buf.subarray(start, end)));
    this.wakeUp();
  }

  onClose(err: ConnectError | undefined): void {
    this.finish(err);
  }

  abort(reason: unknown): void {
    if (this.over) return;
    this.finish(reason);
    this.stream?.cancel();
  }

  private finish(err: unknown): void {
    if (this.over) return;
    this.over = true;
    this.failure = err;
    this.onDone?.();
    if (!this.responded) this.reject(err ?? new ConnectError('the worker ended the stream without headers'));
    this.wakeUp();
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private async *body(): AsyncGenerator<Uint8Array> {
    for (;;) {
      if (this.chunks.length > 0) {
        yield this.chunks.shift()!;
        continue;
      }
      if (this.over) {
        if (this.failure !== undefined) throw this.failure;
        return;
      }
      await new Promise<void>((r) => (this.wake = r));
    }
  }
}

/** Appends a header block's fields to `to` (pseudo-headers left out); returns its :status (0 without one). */
function into(to: Headers, fields: string[]): number {
  let status = 0;
  for (let i = 0; i < fields.length; i += 2) {
    const k = fields[i]!;
    if (k.charCodeAt(0) === 0x3a) {
      if (k === ':status') status = Number(fields[i + 1]);
      continue;
    }
    try {
      to.append(k, fields[i + 1]!);
    } catch {
      // A header the Fetch API refuses (not a valid token or value): not one gRPC reads.
    }
  }
  return status;
}
