// A direct gRPC handler for the mock's Generate server stream, on node:http2's
// compatibility API. Connect's generic handler costs several times more per
// streamed message (async-iterable plumbing); with hundreds of concurrent
// streams that is most of the simulator's CPU. Everything else stays on
// Connect. Identity encoding only; errors go out as grpc-status trailers.

import type http2 from 'node:http2';

import { fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { Code, ConnectError, type HandlerContext } from '@connectrpc/connect';

import { StreamResetFault } from './faults.js';

export interface FastStreamRoute<I extends DescMessage, O extends DescMessage> {
  /** e.g. /sglang.grpc.scheduler.SglangScheduler/Generate */
  path: string;
  input: I;
  output: O;
  handler: (req: MessageShape<I>, ctx: HandlerContext) => AsyncIterable<MessageShape<O>>;
}

export interface FastRoute {
  path: string;
  handle(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): void;
}

export function fastRoute<I extends DescMessage, O extends DescMessage>(route: FastStreamRoute<I, O>): FastRoute {
  return { path: route.path, handle: (req, res) => handleFastStream(route, req, res) };
}

export function handleFastStream<I extends DescMessage, O extends DescMessage>(
  route: FastStreamRoute<I, O>, req: http2.Http2ServerRequest, res: http2.Http2ServerResponse,
): void {
  const chunks: Buffer[] = [];
  req.on('data', (d: Buffer) => chunks.push(d));
  req.on('end', () => {
    void serve(route, Buffer.concat(chunks), req, res);
  });
}

async function serve<I extends DescMessage, O extends DescMessage>(
  route: FastStreamRoute<I, O>, body: Buffer, req: http2.Http2ServerRequest, res: http2.Http2ServerResponse,
): Promise<void> {
  const cancel = new AbortController();
  let ended = false;
  res.on('close', () => {
    if (!ended) cancel.abort();
  });
  let headersSent = false;
  const sendHeaders = () => {
    if (headersSent) return;
    headersSent = true;
    res.writeHead(200, { 'content-type': 'application/grpc+proto', 'grpc-accept-encoding': 'identity' });
  };
  const finish = (code: number, message = '') => {
    if (res.destroyed || ended) return;
    ended = true;
    const trailers: Record<string, string> = { 'grpc-status': String(code) };
    if (message) trailers['grpc-message'] = encodeURIComponent(message);
    if (!headersSent) {
      // Trailers-only response.
      headersSent = true;
      res.writeHead(200, { 'content-type': 'application/grpc+proto', ...trailers });
      res.end();
      return;
    }
    res.addTrailers(trailers);
    res.end();
  };
  try {
    if (req.headers['grpc-encoding'] && req.headers['grpc-encoding'] !== 'identity') {
      throw new ConnectError(`grpc-encoding ${String(req.headers['grpc-encoding'])} not supported`, Code.Unimplemented);
    }
    if (body.length < 5 || body[0] !== 0) throw new ConnectError('expected one uncompressed request message', Code.InvalidArgument);
    const len = body.readUInt32BE(1);
    const msg = fromBinary(route.input, body.subarray(5, 5 + len));
    // The request's metadata as Connect's handlers read it (only get(): what the services use).
    const requestHeader = { get: (name: string) => headerValue(req.headers[name]) };
    const ctx = { signal: cancel.signal, requestHeader } as unknown as HandlerContext;
    for await (const out of route.handler(msg, ctx)) {
      if (res.destroyed) break;
      sendHeaders();
      const bytes = toBinary(route.output, out);
      const frame = Buffer.allocUnsafe(5 + bytes.length);
      frame[0] = 0;
      frame.writeUInt32BE(bytes.length, 1);
      frame.set(bytes, 5);
      if (!res.write(frame) && !res.destroyed) {
        await new Promise<void>((r) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            r();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
    }
    finish(0);
  } catch (err) {
    if (err instanceof StreamResetFault && !res.destroyed) {
      // What a server's flood guard does to one stream: RST_STREAM, no grpc-status.
      ended = true;
      if (err.connection) res.stream.session?.destroy(undefined, err.http2Code);
      else res.stream.close(err.http2Code);
      return;
    }
    const ce = ConnectError.from(err);
    finish(ce.code, ce.rawMessage);
  }
}

function headerValue(v: string | string[] | undefined): string | null {
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
}
