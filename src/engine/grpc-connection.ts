// The connection plumbing both engine protocols share: one HTTP/2 connection per worker,
// the engine client's own (src/engine/h2/: keep-alive PINGs, idle close), carrying Generate
// directly and the unary rpcs through Connect (its gRPC protocol over h2UniversalClient),
// the unary rpcs under one deadline with their failures as EngineErrors, and the per-rank
// load rows both GetLoads answers carry. The 'connect' transport puts everything on
// connect-node's client instead (for comparison in bench/). The protocol clients
// (sglang-client.ts, vllm-client.ts) keep only their request and response mapping.

import { Code, ConnectError, type Transport } from '@connectrpc/connect';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';

import { EngineError } from './errors.js';
import { fromConnectStream } from './generate-stream.js';
import { GRPC_REQUEST_HEADERS, openServerStream, type ServerStream } from './grpc-h2.js';
import { DEFAULT_CONNECTION, H2Client } from './h2/client.js';
import { h2GrpcTransport } from './h2/universal-client.js';
import type { EngineAdminResult, EngineLoads } from './types.js';

export interface EngineClientOptions {
  /** Give up opening the HTTP/2 connection after this long. Default 3000. */
  connectTimeoutMs?: number;
  /** Deadline for unary rpcs (health, abort, info, loads). Default 5000. */
  rpcTimeoutMs?: number;
  /**
   * HTTP/2 PING interval while streams are open. A worker that stops
   * answering PINGs (hung process, dead host) fails its streams after
   * pingIntervalMs + pingTimeoutMs. Default 10000.
   */
  pingIntervalMs?: number;
  /** Default 5000. */
  pingTimeoutMs?: number;
  /** Close an unused connection after this long. Default 15 min. */
  idleConnectionTimeoutMs?: number;
  /**
   * How Generate streams are read: 'h2' (default) on the engine client's own
   * HTTP/2 connection (src/engine/h2/); 'connect' goes through Connect's generic
   * client on node:http2 (several times the CPU per message; kept for comparison
   * in bench/), and so do the unary rpcs. Unary rpcs always go through Connect.
   */
  generateTransport?: 'h2' | 'connect';
  /**
   * A Generate whose worker sends no response message within this long fails with
   * DEADLINE_EXCEEDED (a 504) and takes the worker out of rotation until its health
   * check passes: a worker that accepts the stream and never answers. Generous, since
   * a long prefill also delays the first message. 0: no deadline. Default 300000.
   * (The 'connect' transport does not apply it.)
   */
  firstResponseTimeoutMs?: number;
}

export const DEFAULT_FIRST_RESPONSE_TIMEOUT_MS = 300_000;

/** grpc://host:port → http://host:port (grpcs → https; vllm+grpc[s] alike). */
export function toBaseUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new EngineError('invalid_argument', `bad engine worker URL ${JSON.stringify(url)}`, url);
  }
  const proto = u.protocol.replace(/^(sglang|vllm)\+/, '');
  const scheme = proto === 'grpc:' || proto === 'http:' ? 'http:'
    : proto === 'grpcs:' || proto === 'https:' ? 'https:'
    : undefined;
  if (!scheme || !u.hostname || !u.port) {
    throw new EngineError('invalid_argument', `engine worker URL must look like grpc://host:port, got ${url}`, url);
  }
  return `${scheme}//${u.host}`;
}

/** The call options of a unary rpc. */
export interface UnaryOptions {
  timeoutMs: number;
}

export class EngineConnection {
  readonly transport: Transport;
  /** The worker's connection: ours ('h2'), or connect-node's ('connect'). */
  private readonly h2: H2Client | undefined;
  private readonly session: Http2SessionManager | undefined;
  private readonly rpcTimeoutMs: number;
  private readonly firstResponseMs: number;

  constructor(
    readonly url: string,
    opts: EngineClientOptions = {},
  ) {
    const baseUrl = toBaseUrl(url);
    this.rpcTimeoutMs = opts.rpcTimeoutMs ?? 5000;
    this.firstResponseMs = Math.max(0, opts.firstResponseTimeoutMs ?? DEFAULT_FIRST_RESPONSE_TIMEOUT_MS);
    const connection = {
      connectTimeoutMs: opts.connectTimeoutMs ?? DEFAULT_CONNECTION.connectTimeoutMs,
      pingIntervalMs: opts.pingIntervalMs ?? DEFAULT_CONNECTION.pingIntervalMs,
      pingTimeoutMs: opts.pingTimeoutMs ?? DEFAULT_CONNECTION.pingTimeoutMs,
      idleConnectionTimeoutMs: opts.idleConnectionTimeoutMs ?? DEFAULT_CONNECTION.idleConnectionTimeoutMs,
    };
    if ((opts.generateTransport ?? 'h2') === 'h2') {
      this.h2 = new H2Client(baseUrl, { ...connection, headers: GRPC_REQUEST_HEADERS });
      this.transport = h2GrpcTransport(this.h2, baseUrl);
    } else {
      // Own the session manager so close() can tear the connection down.
      this.session = new Http2SessionManager(baseUrl, connection);
      this.transport = createGrpcTransport({ baseUrl, sessionManager: this.session });
    }
  }

  /** A unary rpc under the rpc deadline; a failure becomes an EngineError naming `what`. */
  async unary<T>(what: string, call: (o: UnaryOptions) => Promise<T>): Promise<T> {
    try {
      return await call({ timeoutMs: this.rpcTimeoutMs });
    } catch (err) {
      throw EngineError.from(err, this.url, what);
    }
  }

  /** An admin rpc (cache flush, profiling) under the rpc deadline, its reply as EngineAdminResult. */
  async admin(what: string, call: (o: UnaryOptions) => Promise<EngineAdminResult>): Promise<EngineAdminResult> {
    const r = await this.unary(what, call);
    return { success: r.success, message: r.message };
  }

  /** A health rpc: any failure reads as unhealthy. */
  async healthy(call: (o: UnaryOptions) => Promise<{ healthy: boolean }>): Promise<boolean> {
    try {
      return (await call({ timeoutMs: this.rpcTimeoutMs })).healthy;
    } catch {
      return false;
    }
  }

  /**
   * Opens a Generate server stream: `encode`'s gRPC frame sent straight on the
   * session and every response message read through `decode` (h2), or the
   * request made by `viaConnect` through Connect's client when the 'connect'
   * transport was chosen.
   */
  generate<T>(
    path: string,
    decode: (bytes: Uint8Array, start: number, end: number) => T,
    encode: () => Buffer | Buffer[],
    viaConnect: (cancel: AbortSignal) => AsyncIterable<T>,
    /** Metadata of this call besides the fixed set (the trace context), flat name, value pairs. */
    metadata?: readonly string[],
  ): ServerStream<T> {
    return this.h2
      ? openServerStream(this.h2, path, encode(), decode, this.firstResponseMs, metadata)
      : fromConnectStream(viaConnect);
  }

  close(): void {
    const err = new ConnectError(`engine client for ${this.url} closed`, Code.Unavailable);
    this.h2?.close(err);
    this.session?.abort(err);
  }
}

/** The per-rank load row of both protocols' GetLoads answers. */
export interface WireRankLoad {
  dpRank: number;
  numRunningReqs: number;
  numWaitingReqs: number;
  numUsedTokens: number;
  maxTotalNumTokens: number;
  tokenUsage: number;
  maxRunningRequests: number;
  numWaitingUncachedTokens: number;
}

export function rankLoadOf(l: WireRankLoad): EngineLoads['perRank'][number] {
  return {
    dpRank: l.dpRank,
    runningRequests: l.numRunningReqs,
    waitingRequests: l.numWaitingReqs,
    usedTokens: l.numUsedTokens,
    maxTotalTokens: l.maxTotalNumTokens,
    tokenUsage: l.tokenUsage,
    maxRunningRequests: l.maxRunningRequests,
    waitingUncachedTokens: l.numWaitingUncachedTokens,
  };
}

/** Flat name, value pairs as the headers of a Connect call (the 'connect' transport); undefined stays undefined. */
export function metadataInit(pairs: readonly string[] | undefined): [string, string][] | undefined {
  if (pairs === undefined) return undefined;
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) out.push([pairs[i]!, pairs[i + 1]!]);
  return out;
}
