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
import { create } from '@bufbuild/protobuf';
import { FlushCacheRequestSchema, StartProfileRequestSchema, StopProfileRequestSchema } from '../gen/common_pb.js';
import type { EngineAdminResult, EngineDisaggregation } from './types.js';
import { createClient, type Client } from '@connectrpc/connect';

import {
  AbortRequestSchema,
  GenerateRequestSchema,
  GetLoadsRequestSchema,
  GetModelInfoRequestSchema,
  GetServerInfoRequestSchema,
  HealthCheckRequestSchema,
  ListLoadedLoRAAdaptersRequestSchema,
  LoadLoRAAdapterRequestSchema,
  SamplingParamsSchema,
  UnloadLoRAAdapterRequestSchema,
  SglangScheduler,
  type GenerateRequest,
  type SamplingParams,
} from '../gen/sglang_scheduler_pb.js';
import { sglangEmbed } from './embed.js';
import type { AdapterRef, EmbedParams, EmbedResult } from './types.js';
import { EngineError } from './errors.js';
import { generateStream, type WireResponse } from './generate-stream.js';
import { decodeGenerateResponse, SGLANG_RESPONSE } from './generate-response-wire.js';
import { encodeSglangGenerateParts, SGLANG_JSON_OBJECT_SCHEMA, SGLANG_SEED_KEY } from './sglang-generate-wire.js';
import { EngineConnection, metadataInit, rankLoadOf, type EngineClientOptions } from './grpc-connection.js';
import type {
  Cancellation,
  EngineClient,
  EngineEvent,
  EngineLoads,
  EngineModelInfo,
  EngineServerInfo,
  GenerateParams,
} from './types.js';

export { toBaseUrl } from './grpc-connection.js';
export type SglangClientOptions = EngineClientOptions;

const GENERATE_PATH = `/${SglangScheduler.typeName}/${SglangScheduler.method.generate.name}`;
const decodeSglangResponse = (b: Uint8Array, start: number, end: number) => decodeGenerateResponse(b, SGLANG_RESPONSE, start, end);

export class SglangEngineClient implements EngineClient {
  readonly url: string;
  private readonly conn: EngineConnection;
  private readonly rpc: Client<typeof SglangScheduler>;

  constructor(url: string, opts: SglangClientOptions = {}) {
    this.url = url;
    this.conn = new EngineConnection(url, opts);
    this.rpc = createClient(SglangScheduler, this.conn.transport);
  }

  generate(p: GenerateParams, signal: Cancellation): AsyncIterableIterator<EngineEvent> {
    return generateStream(
      this.url, p, signal,
      () => this.conn.generate<WireResponse>(GENERATE_PATH, decodeSglangResponse, () => encodeSglangGenerateParts(p), (cancel) => this.rpc.generate(buildGenerateRequest(p), { signal: cancel, headers: metadataInit(p.traceHeaders) }), p.traceHeaders),
      (id, reason) => this.abort(id, reason),
    );
  }

  async abort(requestId: string, reason = ''): Promise<void> {
    await this.conn.unary(`Abort(${requestId})`, (o) => this.rpc.abort(create(AbortRequestSchema, { requestId, reason }), o));
  }

  flushCache(): Promise<EngineAdminResult> {
    return this.conn.admin('FlushCache', (o) => this.rpc.flushCache(create(FlushCacheRequestSchema), o));
  }

  startProfile(): Promise<EngineAdminResult> {
    return this.conn.admin('StartProfile', (o) => this.rpc.startProfile(create(StartProfileRequestSchema), o));
  }

  stopProfile(): Promise<EngineAdminResult> {
    return this.conn.admin('StopProfile', (o) => this.rpc.stopProfile(create(StopProfileRequestSchema), o));
  }

  health(): Promise<boolean> {
    return this.conn.healthy((o) => this.rpc.healthCheck(create(HealthCheckRequestSchema), o));
  }

  async modelInfo(): Promise<EngineModelInfo> {
    const r = await this.conn.unary('GetModelInfo', (o) => this.rpc.getModelInfo(create(GetModelInfoRequestSchema), o));
    return modelInfoFrom(r);
  }

  async serverInfo(): Promise<EngineServerInfo> {
    const r = await this.conn.unary('GetServerInfo', (o) => this.rpc.getServerInfo(create(GetServerInfoRequestSchema), o));
    return {
      engineVersion: r.sglangVersion,
      activeRequests: r.activeRequests,
      isPaused: r.isPaused,
      uptimeSeconds: r.uptimeSeconds,
      maxTotalNumTokens: r.maxTotalNumTokens,
      serverArgs: r.serverArgs ?? {},
      disaggregation: sglangDisaggregation(r.serverArgs ?? {}),
    };
  }

  async loads(): Promise<EngineLoads> {
    const r = await this.conn.unary('GetLoads', (o) => this.rpc.getLoads(create(GetLoadsRequestSchema, { include: ['core'] }), o));
    const sum = (f: (x: (typeof r.loads)[number]) => number) => r.loads.reduce((a, x) => a + f(x), 0);
    return {
      runningRequests: r.aggregate ? r.aggregate.totalRunningReqs : sum((l) => l.numRunningReqs),
      waitingRequests: r.aggregate ? r.aggregate.totalWaitingReqs : sum((l) => l.numWaitingReqs),
      tokenUsage: r.aggregate ? r.aggregate.avgTokenUsage : r.loads.length ? sum((l) => l.tokenUsage) / r.loads.length : 0,
      genThroughput: r.aggregate ? r.aggregate.avgThroughput * Math.max(1, r.loads.length) : sum((l) => l.genThroughput),
      perRank: r.loads.map(rankLoadOf),
    };
  }

  embed(p: EmbedParams, signal: AbortSignal): Promise<EmbedResult> {
    return sglangEmbed(this.rpc, this.url, p, signal);
  }

  async loadAdapter(a: AdapterRef): Promise<void> {
    const r = await this.conn.unary(`LoadLoRAAdapter(${a.name})`, (o) => this.rpc.loadLoRAAdapter(create(LoadLoRAAdapterRequestSchema, { loraName: a.name, loraPath: a.path, loraId: a.id }), o));
    if (!r.success) throw refused(this.url, 'LoadLoRAAdapter', r.message);
  }

  async unloadAdapter(a: Pick<AdapterRef, 'id' | 'name'>): Promise<void> {
    const r = await this.conn.unary(`UnloadLoRAAdapter(${a.name})`, (o) => this.rpc.unloadLoRAAdapter(create(UnloadLoRAAdapterRequestSchema, { loraName: a.name, loraId: a.id }), o));
    if (!r.success) throw refused(this.url, 'UnloadLoRAAdapter', r.message);
  }

  async listAdapters(): Promise<AdapterRef[]> {
    const r = await this.conn.unary('ListLoadedLoRAAdapters', (o) => this.rpc.listLoadedLoRAAdapters(create(ListLoadedLoRAAdaptersRequestSchema), o));
    return r.loadedAdapters.map((x) => ({ id: x.loraId, name: x.loraName, path: x.loraPath }));
  }

  close(): void {
    this.conn.close();
  }
}

/** An engine's success=false answer: the request's fault, in the engine's words. */
function refused(url: string, rpc: string, message: string): EngineError {
  const words = message || `${rpc} refused`;
  return new EngineError('invalid_argument', words, url, { engineMessage: words });
}

export function createSglangClient(url: string, opts?: SglangClientOptions): EngineClient {
  return new SglangEngineClient(url, opts);
}

/**
 * GenerateParams → wire request, with engine defaults filled in. The h2 path
 * sends encodeSglangGenerate(p) instead, the same bytes without protobuf-es;
 * this one serves the 'connect' transport and is the reference the encoder is
 * tested against.
 */
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
    // No seed field on this protocol: custom_params.seed, as a decimal string (exact to 64 bits).
    customParams: p.seed === undefined ? undefined : { [SGLANG_SEED_KEY]: String(p.seed) },
  });
  return create(GenerateRequestSchema, {
    requestId: p.requestId,
    tokenized: {
      originalText: p.originalText ?? '',
      inputIds: Array.from(p.inputIds),
    },
    mmInputs: p.multimodal ? {
      pixelValues: p.multimodal.pixelValues === null ? undefined : { data: p.multimodal.pixelValues.data, shape: p.multimodal.pixelValues.shape, dtype: p.multimodal.pixelValues.dtype },
      modelSpecificTensors: Object.fromEntries(p.multimodal.modelTensors.map(([k, t]) => [k, { data: t.data, shape: t.shape, dtype: t.dtype }])),
      imTokenId: p.multimodal.imTokenId,
      mmPlaceholders: p.multimodal.placeholders,
    } : undefined,
    samplingParams: sampling,
    stream: p.stream,
    loraId: p.loraId ?? '',
    dataParallelRank: p.dataParallelRank,
    // -1: no prompt logprobs, only output ones; 0: from the first prompt token.
    logprobStartLen: p.promptLogprobs === undefined ? -1 : 0,
    returnLogprob: p.logprobs === true || p.promptLogprobs !== undefined,
    topLogprobsNum: Math.max(p.logprobs === true ? (p.topLogprobs ?? 0) : 0, p.promptLogprobs ?? 0),
    disaggregatedParams: p.bootstrap ? { bootstrapHost: p.bootstrap.host, bootstrapPort: p.bootstrap.port, bootstrapRoom: p.bootstrap.room } : undefined,
  });
}

/** SGLang has no JSON mode: "any JSON object" is the schema {"type":"object"}, as its OpenAI server does. */
function sglangConstraint(c: GenerateParams['constraint']): SamplingParams['constraint'] {
  switch (c?.kind) {
    case 'json_schema': return { case: 'jsonSchema', value: c.value };
    case 'json_object': return { case: 'jsonSchema', value: SGLANG_JSON_OBJECT_SCHEMA };
    case 'regex': return { case: 'regex', value: c.value };
    case 'ebnf': return { case: 'ebnfGrammar', value: c.value };
    case 'structural_tag': return { case: 'structuralTag', value: c.value };
    default: return { case: undefined };
  }
}

/** SGLang's server_args: disaggregation_mode "prefill" | "decode" | "null", and the prefill side's bootstrap port. */
function sglangDisaggregation(args: Record<string, unknown>): EngineDisaggregation {
  const mode = args['disaggregation_mode'];
  const role = mode === 'prefill' || mode === 'decode' ? mode : null;
  const port = args['disaggregation_bootstrap_port'];
  return role === 'prefill' && typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65536 ? { role, bootstrapPort: port } : { role };
}
