// EngineClient over vLLM's gRPC engine protocol (vllm.grpc.engine.VllmEngine,
// as served by smg-grpc-servicer in front of vLLM's AsyncLLM).
//
// Wire facts this file relies on (see proto/vllm_engine.proto):
//  - Generate is a server stream of GenerateResponse{chunk | complete}, like
//    SGLang's, but in stream mode every count is a delta: a chunk's
//    completion_tokens is the number of ids in that chunk, and the
//    GenerateComplete after a choice's last chunk repeats that chunk's ids
//    and count. This client sums them into the running totals EngineEvents
//    carry. Without streaming, the GenerateComplete holds everything.
//  - A chunk may carry several token ids.
//  - top_k 0 means "no top-k"; temperature and max_tokens are optional;
//    the request seed travels as an int32 (SGLang's goes in custom_params).
//  - Abort takes a list of ids and answers nothing.
import { modelInfoFrom } from './model-info.js';
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { FlushCacheRequestSchema, Modality, StartProfileRequestSchema, StopProfileRequestSchema } from '../gen/common_pb.js';
import type { EngineAdminResult, EngineMultimodal, EngineTensor } from './types.js';
import { createClient, type Client } from '@connectrpc/connect';

import {
  type MultimodalInputsSchema,
  AbortRequestSchema,
  GenerateRequestSchema,
  GetLoadsRequestSchema,
  GetModelInfoRequestSchema,
  GetServerInfoRequestSchema,
  HealthCheckRequestSchema,
  SamplingParamsSchema,
  VllmEngine,
  type GenerateRequest,
  type SamplingParams,
} from '../gen/vllm_engine_pb.js';
import { vllmEmbed } from './embed.js';
import type { EmbedParams, EmbedResult } from './types.js';
import { generateStream, type WireResponse } from './generate-stream.js';
import { EngineError } from './errors.js';
import { encodeVllmGenerateParts, vllmTopCount } from './vllm-generate-wire.js';
import { decodeGenerateResponse, VLLM_RESPONSE } from './generate-response-wire.js';
import { mapStream, type ServerStream } from './grpc-h2.js';
import { EngineConnection, metadataInit, rankLoadOf, type EngineClientOptions } from './grpc-connection.js';
import type {
  AdapterRef,
  Cancellation,
  EngineClient,
  EngineEvent,
  EngineLoads,
  EngineModelInfo,
  EngineServerInfo,
  GenerateParams,
} from './types.js';

export type VllmClientOptions = EngineClientOptions;

const GENERATE_PATH = `/${VllmEngine.typeName}/${VllmEngine.method.generate.name}`;
const decodeVllmResponse = (b: Uint8Array, start: number, end: number) => decodeGenerateResponse(b, VLLM_RESPONSE, start, end);

export class VllmEngineClient implements EngineClient {
  readonly url: string;
  private readonly conn: EngineConnection;
  readonly rpc: Client<typeof VllmEngine>;

  constructor(url: string, opts: VllmClientOptions = {}) {
    this.url = url;
    this.conn = new EngineConnection(url, opts);
    this.rpc = createClient(VllmEngine, this.conn.transport);
  }

  generate(p: GenerateParams, signal: Cancellation): AsyncIterableIterator<EngineEvent> {
    // vLLM's SamplingParams.seed is an int32 on this wire: a wider seed (valid for the API,
    // an int64) would be cut silently, so it is refused as the engine would refuse it.
    if (p.seed !== undefined && (p.seed < -2147483648n || p.seed > 2147483647n)) {
      const words = `\`seed\` must be a 32-bit integer (-2147483648 to 2147483647) for this model's vLLM engine, got ${p.seed}`;
      throw new EngineError('invalid_argument', words, this.url, { engineMessage: words, requestId: p.requestId });
    }
    return generateStream(
      this.url, p, signal,
      () => accumulate(this.conn.generate<WireResponse>(GENERATE_PATH, decodeVllmResponse, () => encodeVllmGenerateParts(p), (cancel) => this.rpc.generate(buildVllmGenerateRequest(p), { signal: cancel, headers: metadataInit(p.traceHeaders) }), p.traceHeaders), p.stream),
      (id) => this.abort(id),
    );
  }

  async abort(requestId: string): Promise<void> {
    await this.conn.unary(`Abort(${requestId})`, (o) => this.rpc.abort(create(AbortRequestSchema, { requestIds: [requestId] }), o));
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
      engineVersion: r.serverType || 'vllm-grpc',
      activeRequests: r.activeRequests,
      isPaused: r.isPaused,
      uptimeSeconds: r.uptimeSeconds,
      // vLLM reports capacity through GetLoads (max_total_num_tokens), not here.
      maxTotalNumTokens: 0,
      serverArgs: {
        data_parallel_size: r.dataParallelSize,
        block_size: r.blockSize,
        max_num_seqs: r.maxNumSeqs,
        kv_cache_dtype: r.kvCacheDtype,
        model_dtype: r.modelDtype,
        engine_reasoning_parser: r.engineReasoningParser,
        kv_connector: r.kvConnector,
        kv_role: r.kvRole,
        kv_engine_id: r.kvEngineId,
      },
      disaggregation: {
        // kv_both (a connector on both sides, as NIXL pairs often run) names no role.
        role: r.kvRole === 'kv_producer' ? 'prefill' : r.kvRole === 'kv_consumer' ? 'decode' : null,
        kvConnector: r.kvConnector,
        kvEngineId: r.kvEngineId,
        dataParallelSize: r.dataParallelSize,
      },
    };
  }

  async loads(): Promise<EngineLoads> {
    const r = await this.conn.unary('GetLoads', (o) => this.rpc.getLoads(create(GetLoadsRequestSchema, { include: ['core'] }), o));
    const sum = (f: (x: (typeof r.loads)[number]) => number) => r.loads.reduce((a, x) => a + f(x), 0);
    return {
      runningRequests: sum((l) => l.numRunningReqs),
      waitingRequests: sum((l) => l.numWaitingReqs),
      tokenUsage: r.loads.length ? sum((l) => l.tokenUsage) / r.loads.length : 0,
      genThroughput: sum((l) => l.genThroughput),
      perRank: r.loads.map(rankLoadOf),
    };
  }

  embed(p: EmbedParams, signal: AbortSignal): Promise<EmbedResult> {
    return vllmEmbed(this.rpc, this.url, p, signal);
  }

  // vLLM's engine protocol has no LoRA rpcs and no adapter field on GenerateRequest
  // (proto/vllm_engine.proto): adapters cannot be loaded or selected through it.
  loadAdapter(): Promise<void> {
    return Promise.reject(noLora(this.url));
  }

  unloadAdapter(): Promise<void> {
    return Promise.reject(noLora(this.url));
  }

  listAdapters(): Promise<AdapterRef[]> {
    return Promise.resolve([]);
  }

  close(): void {
    this.conn.close();
  }
}

/** Stream mode: turn vLLM's per-message deltas into running totals. */
function accumulate(src: ServerStream<WireResponse>, stream: boolean): ServerStream<WireResponse> {
  if (!stream) return src;
  // Choice index → tokens so far; an array, indexes are small.
  const totals: number[] = [];
  return mapStream(src, (res): WireResponse => {
    const r = res.response;
    if (r.case === 'chunk') {
      const t = (totals[r.value.index] ?? 0) + r.value.tokenIds.length;
      totals[r.value.index] = t;
      return { response: { case: 'chunk', value: { ...r.value, completionTokens: t } } };
    }
    if (r.case === 'complete') {
      return { response: { case: 'complete', value: { ...r.value, completionTokens: totals[r.value.index] ?? r.value.completionTokens } } };
    }
    return res;
  });
}

/**
 * GenerateParams → vLLM wire request, with vLLM's defaults filled in. The h2
 * path sends encodeVllmGenerate(p) instead, the same bytes without
 * protobuf-es; this one serves the 'connect' transport and is the reference
 * the encoder is tested against.
 */
export function buildVllmGenerateRequest(p: GenerateParams): GenerateRequest {
  const sampling = create(SamplingParamsSchema, {
    temperature: p.temperature ?? 1,
    topP: p.topP ?? 1,
    topK: p.topK === undefined || p.topK <= 0 ? 0 : p.topK,
    minP: p.minP ?? 0,
    frequencyPenalty: p.frequencyPenalty ?? 0,
    presencePenalty: p.presencePenalty ?? 0,
    repetitionPenalty: p.repetitionPenalty ?? 1,
    maxTokens: p.maxNewTokens,
    minTokens: p.minNewTokens ?? 0,
    stopTokenIds: p.stopTokenIds ?? [],
    ignoreEos: p.ignoreEos ?? false,
    skipSpecialTokens: true,
    spacesBetweenSpecialTokens: true,
    n: Math.max(1, p.n ?? 1),
    seed: p.seed === undefined ? undefined : Number(p.seed),
    constraint: vllmConstraint(p.constraint),
    logitBias: p.logitBias ? Object.fromEntries(p.logitBias) : {},
    logprobs: p.logprobs === true ? vllmTopCount(p.topLogprobs ?? 0) : undefined,
    promptLogprobs: p.promptLogprobs === undefined ? undefined : vllmTopCount(p.promptLogprobs),
  });
  return create(GenerateRequestSchema, {
    requestId: p.requestId,
    input: { case: 'tokenized', value: { originalText: p.originalText ?? '', inputIds: Array.from(p.inputIds) } },
    samplingParams: sampling,
    stream: p.stream,
    mmInputs: p.multimodal ? vllmMultimodal(p.multimodal) : undefined,
    kvTransferParamsJson: p.kvTransferParams,
    dataParallelRank: p.dataParallelRank,
  });
}

function vllmMultimodal(m: EngineMultimodal): MessageInitShape<typeof MultimodalInputsSchema> {
  const tensor = (t: EngineTensor) => ({ shape: t.shape, dtype: t.dtype, payload: { case: 'inline' as const, value: t.data } });
  return {
    pixelValues: m.pixelValues === null ? undefined : tensor(m.pixelValues),
    modelSpecificTensors: Object.fromEntries(m.modelTensors.map(([k, t]) => [k, tensor(t)])),
    imTokenId: m.imTokenId,
    mmPlaceholders: m.placeholders,
    mmHashes: m.hashes,
    batchedKeys: m.batchedKeys,
    flatKeys: Object.fromEntries(m.flatKeys),
    keepOnCpuKeys: m.keepOnCpuKeys,
    modality: Modality.IMAGE,
  };
}

function vllmConstraint(c: GenerateParams['constraint']): SamplingParams['constraint'] {
  switch (c?.kind) {
    case 'json_schema': return { case: 'jsonSchema', value: c.value };
    case 'json_object': return { case: 'jsonObject', value: true };
    case 'regex': return { case: 'regex', value: c.value };
    case 'ebnf': return { case: 'grammar', value: c.value };
    case 'structural_tag': return { case: 'structuralTag', value: c.value };
    default: return { case: undefined };
  }
}

export function createVllmClient(url: string, opts?: VllmClientOptions): EngineClient {
  return new VllmEngineClient(url, opts);
}

function noLora(url: string): EngineError {
  const words = "vLLM's engine protocol has no LoRA adapter rpcs (LoRA adapters need SGLang scheduler workers, grpc://)";
  return new EngineError('unimplemented', words, url, { engineMessage: words });
}
