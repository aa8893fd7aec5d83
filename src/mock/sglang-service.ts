// The mock engine's SGLang scheduler service (sglang.grpc.scheduler).
//
// Stream mode: a chunk per batch of new tokens of a choice, then a
// GenerateComplete whose output_ids repeat that choice's last chunk (as
// SGLang's own servicer does). stream=false: one GenerateComplete per choice
// carrying every output id. An Abort rpc ends open choices with
// finish_reason "abort"; a cancelled stream just stops.

import { create, toJson, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';

import {
  AbortResponseSchema,
  AggregateMetricsSchema,
  GenerateRequestSchema,
  GenerateResponseSchema,
  GetLoadsResponseSchema,
  GetModelInfoResponseSchema,
  GetServerInfoResponseSchema,
  ListLoadedLoRAAdaptersResponseSchema,
  LoadLoRAAdapterResponseSchema,
  SglangScheduler,
  UnloadLoRAAdapterResponseSchema,
  type GenerateRequest,
  type GenerateResponse,
} from '../gen/sglang_scheduler_pb.js';
import { mockInputLogprobs, mockOutputLogprobs } from './logprobs.js';
import { fastRoutes, modelInfoFields, rankLoads, serveGenerate, sharedHandlers } from './service-common.js';
import type { CoreOutput, CoreRequest } from './sim-core.js';
import { sglangPlan } from './sglang-pd.js';
import { multimodalProblem } from './multimodal-check.js';
import type { MockContext } from './mock-context.js';
import { traceContextOf } from './received.js';
import { SGLANG_SEED_KEY } from '../engine/sglang-generate-wire.js';

/** custom_params.seed (Portico's carrier of the seed on this protocol: a decimal int64), folded to the simulator's 32 bits. */
function customSeed(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^-?\d{1,19}$/.test(v)) throw new ConnectError(`custom_params.seed must be a decimal 64-bit integer string, got ${JSON.stringify(v)}`, Code.InvalidArgument);
  return Number(BigInt.asIntN(32, BigInt(v)));
}

export function sglangRoutes(m: MockContext) {
  const { core, stats } = m;

  async function* generate(req: GenerateRequest, ctx: HandlerContext): AsyncGenerator<GenerateResponse> {
    stats.generates++;
    const id = req.requestId;
    if (!id) throw new ConnectError('request_id is required', Code.InvalidArgument);
    if (!req.tokenized) throw new ConnectError('tokenized input is required', Code.InvalidArgument);
    const mm = req.mmInputs;
    const mmBad = mm && multimodalProblem(req.tokenized.inputIds, {
      pixelValues: mm.pixelValues,
      tensors: mm.modelSpecificTensors,
      imTokenId: mm.imTokenId,
      placeholders: mm.mmPlaceholders,
    });
    if (mmBad) throw new ConnectError(`mm_inputs: ${mmBad}`, Code.InvalidArgument);
    const sp = req.samplingParams;
    m.adapters.check(req.loraId);
    m.received.record({ requestId: id, protocol: 'sglang', loraId: req.loraId, ...traceContextOf(ctx), json: () => toJson(GenerateRequestSchema, req, { useProtoFieldName: true }) as Record<string, unknown> });
    const top = req.returnLogprob ? Math.max(0, req.topLogprobsNum) : -1;
    const logprobs = (ids: number[]) => (top >= 0 ? mockOutputLogprobs(ids, top, core.o.vocabSize) : undefined);
    // Prompt logprobs from logprob_start_len, on each choice's first chunk.
    const promptFrom = req.returnLogprob && req.logprobStartLen >= 0 ? req.logprobStartLen : -1;
    const promptSent = new Set<number>();
    const inputLogprobs = (index: number) => {
      if (promptFrom < 0 || promptSent.has(index) || !req.tokenized) return undefined;
      promptSent.add(index);
      return mockInputLogprobs(req.tokenized.inputIds.slice(promptFrom), Math.max(0, req.topLogprobsNum), core.o.vocabSize);
    };
    const lastChunk = new Map<number, number[]>();
    const pd = sglangPlan(m, req);
    const coreReq: CoreRequest = {
      id,
      prompt: req.tokenized.inputIds,
      n: Math.max(1, sp?.n ?? 1),
      maxNewTokens: sp?.maxNewTokens,
      minNewTokens: sp?.minNewTokens ?? 0,
      stopTokenIds: sp?.stopTokenIds ?? [],
      ignoreEos: sp?.ignoreEos ?? false,
      dpRank: req.dataParallelRank,
      seed: customSeed(sp?.customParams?.[SGLANG_SEED_KEY]),
    };
    // SGLang's prefill server samples one token and finishes the leg with "length",
    // whatever the request's own limits.
    if (pd?.role === 'prefill') Object.assign(coreReq, { maxNewTokens: 1, minNewTokens: 0, stopTokenIds: [], ignoreEos: true });
    yield* serveGenerate(m, coreReq, ctx, emit, pd);

    function* emit(batch: CoreOutput[]): Generator<GenerateResponse> {
      for (const o of batch) {
        if (o.kind === 'tokens') {
          lastChunk.set(o.index, o.tokenIds);
          if (!req.stream) continue;
          yield create(GenerateResponseSchema, {
            requestId: id,
            response: {
              case: 'chunk',
              value: {
                tokenIds: o.tokenIds,
                promptTokens: o.promptTokens,
                completionTokens: o.completionTokens,
                cachedTokens: o.cachedTokens,
                index: o.index,
                outputLogprobs: logprobs(o.tokenIds),
                inputLogprobs: inputLogprobs(o.index),
              },
            },
          });
        } else {
          const outputIds = !req.stream ? o.outputIds : o.reason === 'abort' ? [] : lastChunk.get(o.index) ?? [];
          yield create(GenerateResponseSchema, {
            requestId: id,
            response: {
              case: 'complete',
              value: {
                outputIds,
                finishReason: o.reason,
                promptTokens: o.promptTokens,
                completionTokens: o.completionTokens,
                cachedTokens: o.cachedTokens,
                index: o.index,
                outputLogprobs: logprobs(outputIds),
                matchedStop: o.matchedTokenId !== undefined
                  ? { case: 'matchedTokenId', value: o.matchedTokenId }
                  : { case: undefined },
              },
            },
          });
        }
      }
    }
  }

  const routes = (router: ConnectRouter) => {
    router.service(SglangScheduler, {
      ...sharedHandlers(m),
      generate,
      async abort(req) {
        stats.abortRpcs++;
        // A PD leg waiting for its KV hand-over is outside the scheduler.
        if (m.pending.abort(req.requestId) && !core.has(req.requestId)) return create(AbortResponseSchema, { success: true });
        if (!core.abort(req.requestId)) {
          return create(AbortResponseSchema, { success: false, message: `no request ${req.requestId}` });
        }
        stats.aborts++;
        return create(AbortResponseSchema, { success: true });
      },
      async loadLoRAAdapter(req) {
        return create(LoadLoRAAdapterResponseSchema, m.adapters.load({ id: req.loraId, name: req.loraName, path: req.loraPath, pinned: req.pinned }));
      },
      async unloadLoRAAdapter(req) {
        return create(UnloadLoRAAdapterResponseSchema, m.adapters.unload(req.loraName, req.loraId));
      },
      async listLoadedLoRAAdapters() {
        return create(ListLoadedLoRAAdaptersResponseSchema, { loadedAdapters: m.adapters.list().map((a) => ({ loraId: a.id, loraName: a.name, loraPath: a.path, pinned: a.pinned })) });
      },
      async getModelInfo() {
        return create(GetModelInfoResponseSchema, { ...modelInfoFields(m), weightVersion: 'default', preferredSamplingParams: m.preferredSamplingParams });
      },
      async getServerInfo() {
        return create(GetServerInfoResponseSchema, {
          serverArgs: m.serverArgs() as JsonObject,
          schedulerInfo: { max_total_num_tokens: m.capacityTokens(), max_running_requests: core.o.maxNumSeqs },
          activeRequests: core.active,
          uptimeSeconds: (Date.now() - m.startedAt.getTime()) / 1000,
          sglangVersion: 'portico-mock',
          serverType: 'grpc',
          startTime: timestampFromDate(m.startedAt),
          maxTotalNumTokens: m.capacityTokens(),
        });
      },
      async getLoads(req) {
        const loads = rankLoads(m, req.dpRank);
        const sum = (f: (x: (typeof loads)[number]) => number) => loads.reduce((a, x) => a + f(x), 0);
        const k = Math.max(1, loads.length);
        return create(GetLoadsResponseSchema, {
          timestamp: new Date().toISOString(),
          version: 'portico-mock',
          dpRankCount: core.ranks.length,
          loads,
          aggregate: create(AggregateMetricsSchema, {
            totalRunningReqs: sum((l) => l.numRunningReqs),
            totalWaitingReqs: sum((l) => l.numWaitingReqs),
            totalReqs: sum((l) => l.numTotalReqs),
            avgTokenUsage: sum((l) => l.tokenUsage) / k,
            avgThroughput: sum((l) => l.genThroughput) / k,
            avgUtilization: sum((l) => l.utilization) / k,
          }),
        });
      },
    });
  };
  return { routes, fast: fastRoutes(m, SglangScheduler, GenerateRequestSchema, GenerateResponseSchema, generate) };
}
