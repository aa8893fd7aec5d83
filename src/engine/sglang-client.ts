// EngineClient over SGLang's scheduler protocol (gRPC, HTTP/2, Connect v2).
//
// Wire facts this file relies on (see proto/sglang_scheduler.proto):
//  - Generate is a server stream of GenerateResponse{chunk | complete}.
//  - A chunk carries the NEW token ids since the previous chunk (possibly
//    several) plus running usage totals; `index` tells choices apart (n > 1).
//  - In stream mode the worker follows the last chunk with a complete whose
//    output_ids repeat that chunk's ids, so complete.output_ids is only
//    trusted in non-stream mode.
//  - Proto3 zeros are not the engine defaults: every sampling scalar is
//    filled explicitly (top_k = -1, repetition_penalty = 1, ...).
import { modelInfoFrom } from './model-info.js';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';

import {
  AbortRequestSchema,
  GenerateRequestSchema,
  GenerateResponseSchema,
  GetLoadsRequestSchema,
  GetModelInfoRequestSchema,
  GetServerInfoRequestSchema,
  HealthCheckRequestSchema,
  SamplingParamsSchema,
  SglangScheduler,
  type GenerateRequest,
  type SamplingParams,
} from '../gen/sglang_scheduler_pb.js';
import { EngineError } from './errors.js';
import { sglangEmbed } from './embed.js';
import type { EmbedParams, EmbedResult } from './types.js';
import { fromConnectStream, generateStream } from './generate-stream.js';
import { openServerStream } from './grpc-h2.js';
import type {
  EngineClient,
  EngineEvent,
  EngineLoads,
  EngineModelInfo,
  EngineServerInfo,
  GenerateParams,
} from './types.js';

export interface SglangClientOptions {
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
}

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

const GENERATE_PATH = `/${SglangScheduler.typeName}/${SglangScheduler.method.generate.name}`;
const decodeResponse = (b: Uint8Array) => fromBinary(GenerateResponseSchema, b);

export class SglangEngineClient implements EngineClient {
  readonly url: string;
  private readonly session: Http2SessionManager;
  private readonly rpc: Client<typeof SglangScheduler>;
  private readonly rpcTimeoutMs: number;
  private readonly direct: boolean;
  /** How often reads may re-arm the keep-alive: well inside the PING interval. */
  private readonly aliveNotifyMs: number;

  constructor(url: string, opts: SglangClientOptions = {}) {
    this.url = url;
    const baseUrl = toBaseUrl(url);
    this.rpcTimeoutMs = opts.rpcTimeoutMs ?? 5000;
    this.direct = (opts.generateTransport ?? 'h2') === 'h2';
    this.aliveNotifyMs = Math.min(500, (opts.pingIntervalMs ?? 10_000) / 4);
    // Own the session manager so close() can tear the connection down.
    this.session = new Http2SessionManager(baseUrl, {
      connectTimeoutMs: opts.connectTimeoutMs ?? 3000,
      pingIntervalMs: opts.pingIntervalMs ?? 10_000,
      pingTimeoutMs: opts.pingTimeoutMs ?? 5000,
      idleConnectionTimeoutMs: opts.idleConnectionTimeoutMs ?? 15 * 60_000,
    });
    const transport = createGrpcTransport({ baseUrl, sessionManager: this.session });
    this.rpc = createClient(SglangScheduler, transport);
  }

  generate(p: GenerateParams, signal: AbortSignal): AsyncGenerator<EngineEvent> {
    return generateStream(
      this.url, p, signal,
      () => this.direct
        ? openServerStream(this.session, GENERATE_PATH, toBinary(GenerateRequestSchema, buildGenerateRequest(p)), decodeResponse, this.aliveNotifyMs)
        : fromConnectStream((cancel) => this.rpc.generate(buildGenerateRequest(p), { signal: cancel })),
      (id, reason) => this.abort(id, reason),
    );
  }

  async abort(requestId: string, reason = ''): Promise<void> {
    try {
      await this.rpc.abort(create(AbortRequestSchema, { requestId, reason }), { timeoutMs: this.rpcTimeoutMs });
    } catch (err) {
      throw EngineError.from(err, this.url, `Abort(${requestId})`);
    }
  }

  async health(): Promise<boolean> {
    try {
      const res = await this.rpc.healthCheck(create(HealthCheckRequestSchema), { timeoutMs: this.rpcTimeoutMs });
      return res.healthy;
    } catch {
      return false;
    }
  }

  async modelInfo(): Promise<EngineModelInfo> {
    const r = await this.unary('GetModelInfo', () =>
      this.rpc.getModelInfo(create(GetModelInfoRequestSchema), { timeoutMs: this.rpcTimeoutMs }));
    return modelInfoFrom(r);
  }

  async serverInfo(): Promise<EngineServerInfo> {
    const r = await this.unary('GetServerInfo', () =>
      this.rpc.getServerInfo(create(GetServerInfoRequestSchema), { timeoutMs: this.rpcTimeoutMs }));
    return {
      engineVersion: r.sglangVersion,
      activeRequests: r.activeRequests,
      isPaused: r.isPaused,
      uptimeSeconds: r.uptimeSeconds,
      maxTotalNumTokens: r.maxTotalNumTokens,
      serverArgs: r.serverArgs ?? {},
    };
  }

  async loads(): Promise<EngineLoads> {
    const r = await this.unary('GetLoads', () =>
      this.rpc.getLoads(create(GetLoadsRequestSchema, { include: ['core'] }), { timeoutMs: this.rpcTimeoutMs }));
    const perRank = r.loads.map((l) => ({
      dpRank: l.dpRank,
      runningRequests: l.numRunningReqs,
      waitingRequests: l.numWaitingReqs,
      usedTokens: l.numUsedTokens,
      maxTotalTokens: l.maxTotalNumTokens,
      tokenUsage: l.tokenUsage,
      maxRunningRequests: l.maxRunningRequests,
      waitingUncachedTokens: l.numWaitingUncachedTokens,
    }));
    const sum = (f: (x: (typeof r.loads)[number]) => number) => r.loads.reduce((a, x) => a + f(x), 0);
    return {
      runningRequests: r.aggregate ? r.aggregate.totalRunningReqs : sum((l) => l.numRunningReqs),
      waitingRequests: r.aggregate ? r.aggregate.totalWaitingReqs : sum((l) => l.numWaitingReqs),
      tokenUsage: r.aggregate ? r.aggregate.avgTokenUsage : r.loads.length ? sum((l) => l.tokenUsage) / r.loads.length : 0,
      genThroughput: r.aggregate ? r.aggregate.avgThroughput * Math.max(1, r.loads.length) : sum((l) => l.genThroughput),
      perRank,
    };
  }

  embed(p: EmbedParams, signal: AbortSignal): Promise<EmbedResult> {
    return sglangEmbed(this.rpc, this.url, p, signal);
  }

  close(): void {
    this.session.abort(new ConnectError(`engine client for ${this.url} closed`, Code.Unavailable));
  }

  private async unary<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw EngineError.from(err, this.url, what);
    }
  }
}

export function createSglangClient(url: string, opts?: SglangClientOptions): EngineClient {
  return new SglangEngineClient(url, opts);
}

/** GenerateParams → wire request, with engine defaults filled in. */
export function buildGenerateRequest(p: GenerateParams): GenerateRequest {
  const sampling = create(SamplingParamsSchema, {
    temperature: p.temperature ?? 1,
    topP: p.topP ?? 1,
    topK: p.topK === undefined || p.topK <= 0 ? -1 : p.topK,
    minP: p.minP ?? 0,
    frequencyPenalty: p.frequencyPenalty ?? 0,
    presencePenalty: p.presencePenalty ?? 0,
    repetitionPenalty: p.repetitionPenalty ?? 1,
    maxNewTokens: p.maxNewTokens,
    minNewTokens: p.minNewTokens ?? 0,
    stopTokenIds: p.stopTokenIds ?? [],
    ignoreEos: p.ignoreEos ?? false,
    // Portico detokenizes itself; these only matter for engine-side text.
    skipSpecialTokens: true,
    spacesBetweenSpecialTokens: true,
    n: Math.max(1, p.n ?? 1),
    constraint: sglangConstraint(p.constraint),
    logitBias: p.logitBias ? Object.fromEntries(Array.from(p.logitBias, ([id, b]) => [String(id), b])) : {},
  });
  return create(GenerateRequestSchema, {
    requestId: p.requestId,
    tokenized: {
      originalText: p.originalText ?? '',
      inputIds: Array.from(p.inputIds),
    },
    samplingParams: sampling,
    stream: p.stream,
    loraId: p.loraId ?? '',
    dataParallelRank: p.dataParallelRank,
    // -1: no prompt logprobs, only output ones; 0: from the first prompt token.
    logprobStartLen: p.promptLogprobs === undefined ? -1 : 0,
    returnLogprob: p.logprobs === true || p.promptLogprobs !== undefined,
    topLogprobsNum: Math.max(p.logprobs === true ? (p.topLogprobs ?? 0) : 0, p.promptLogprobs ?? 0),
  });
}

/** SGLang has no JSON mode: "any JSON object" is the schema {"type":"object"}, as its OpenAI server does. */
function sglangConstraint(c: GenerateParams['constraint']): SamplingParams['constraint'] {
  switch (c?.kind) {
    case 'json_schema': return { case: 'jsonSchema', value: c.value };
    case 'json_object': return { case: 'jsonSchema', value: '{"type":"object"}' };
    case 'regex': return { case: 'regex', value: c.value };
    case 'ebnf': return { case: 'ebnfGrammar', value: c.value };
    case 'structural_tag': return { case: 'structuralTag', value: c.value };
    default: return { case: undefined };
  }
}
