// The KServe gRPC server: inference.GRPCInferenceService on HTTP/2 cleartext with
// @connectrpc/connect-node's gRPC protocol (gRPC only: no Connect or gRPC-Web), beside
// the HTTP server of the same frontend (src/app/frontend.ts starts it).

import http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { ConnectRouter } from '@connectrpc/connect';
import type { AppContext } from '../api/context.js';
import { GRPCInferenceService } from '../gen/kserve/grpc_service_pb.js';
import { kserveService, type InferLimits } from './service.js';
import { apiKeyInterceptor } from './auth.js';

export interface KserveServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  ctx: AppContext;
  /** The accepted key, or keys (--api-key is repeatable). */
  apiKey?: string | readonly string[];
  /** Largest request message accepted, in bytes (as --max-body-bytes bounds HTTP bodies). */
  maxMessageBytes?: number;
  limits?: InferLimits;
}

export interface KserveServer {
  readonly port: number;
  /** Stop accepting; calls still running get `graceMs` to end, then their sessions are closed. */
  close(graceMs: number): Promise<void>;
}

export async function startKserveServer(o: KserveServerOptions): Promise<KserveServer> {
  const handler = connectNodeAdapter({
    routes: (router: ConnectRouter) => router.service(GRPCInferenceService, kserveService(o.ctx, { version: packageVersion(), limits: o.limits })),
    grpc: true,
    grpcWeb: false,
    connect: false,
    readMaxBytes: o.maxMessageBytes,
    interceptors: o.apiKey && o.apiKey.length > 0 ? [apiKeyInterceptor(o.apiKey)] : [],
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`cannot listen for gRPC on ${o.host}:${o.port}: the port is in use (--grpc-port)`) : err);
    server.once('error', failed);
    server.listen(o.port, o.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const s of sessions) s.destroy();
        }, graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        // Idle sessions would hold server.close() open: ask every session to finish.
        for (const s of sessions) s.close();
      }),
  };
}

/** ServerMetadata's version: package.json's (dist/src/kserve/ is three levels below the root). */
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
