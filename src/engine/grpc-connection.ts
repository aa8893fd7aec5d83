// The connection plumbing both engine protocols share: one HTTP/2 session per worker
// (keep-alive PINGs, idle close), Connect for unary rpcs under one deadline with their
// failures as EngineErrors, Generate read either straight off the session or through
// Connect, and the per-rank load rows both GetLoads answers carry. The protocol clients
// (sglang-client.ts, vllm-client.ts) keep only their request and response mapping.

import { Code, ConnectError, type Transport } from '@connectrpc/connect';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';

import { EngineError } from './errors.js';
import { fromConnectStream } from './generate-stream.js';
import { openServerStream, type ServerStream } from './grpc-h2.js';
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
   * How Generate streams are read: 'h2' (default) frames gRPC directly on
   * the HTTP/2 session; 'connect' goes through Connect's generic client
   * (several times the CPU per message; kept for comparison in bench/).
   * Unary rpcs always use Connect. Both share one connection.
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
  private readonly session: Http2SessionManager;
  private readonly rpcTimeoutMs: number;
  private readonly direct: boolean;
  /** How often reads may re-arm the keep-alive: well inside the PING interval. */
  private readonly aliveNotifyMs: number;
  private readonly firstResponseMs: number;

  constructor(
    readonly url: string,
    opts: EngineClientOptions = {},
  ) {
    const baseUrl = toBaseUrl(url);
    this.rpcTimeoutMs = opts.rpcTimeoutMs ?? 5000;
    this.direct = (opts.generateTransport ?? 'h2') === 'h2';
    this.aliveNotifyMs = Math.min(500, (opts.pingIntervalMs ?? 10_000) / 4);
    this.firstResponseMs = Math.max(0, opts.firstResponseTimeoutMs ?? DEFAULT_FIRST_RESPONSE_TIMEOUT_MS);
    // Own the session manager so close() can tear the connection down.
    this.session = new Http2SessionManager(baseUrl, {
      connectTimeoutMs: opts.connectTimeoutMs ?? 3000,
      pingIntervalMs: opts.pingIntervalMs ?? 10_000,
      pingTimeoutMs: opts.pingTimeoutMs ?? 5000,
      idleConnectionTimeoutMs: opts.idleConnectionTimeoutMs ?? 15 * 60_000,
    });
    this.transport = createGrpcTransport({ baseUrl, sessionManager: this.session });
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
    encode: () => Buffer,
    viaConnect: (cancel: AbortSignal) => AsyncIterable<T>,
  ): ServerStream<T> {
    return this.direct
      ? openServerStream(this.session, path, encode(), decode, this.aliveNotifyMs, this.firstResponseMs)
      : fromConnectStream(viaConnect);
  }

  close(): void {
    this.session.abort(new ConnectError(`engine client for ${this.url} closed`, Code.Unavailable));
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
