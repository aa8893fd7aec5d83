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
  EmbedResponseSchema,
  AggregateMetricsSchema,
  GenerateRequestSchema,
  GenerateResponseSchema,
  GetLoadsResponseSchema,
  GetModelInfoResponseSchema,
  GetServerInfoResponseSchema,
  HealthCheckResponseSchema,
  SchedulerLoadSchema,
  SglangScheduler,
  type GenerateRequest,
  type GenerateResponse,
} from '../gen/sglang_scheduler_pb.js';
import { FlushCacheResponseSchema, KvEventBatchSchema, SubscribeKvEventsRequestSchema } from '../gen/common_pb.js';
import { fastRoute } from './grpc-fast-path.js';
import { mockInputLogprobs, mockOutputLogprobs } from './logprobs.js';
import { embedInput, mockEmbedding } from './embed.js';
import { subscribeKvEvents } from './kv-events-rpc.js';
import { runRequest } from './output-stream.js';
import { SimRequestError, type CoreOutput } from './sim-core.js';
import type { MockContext } from './mock-context.js';

export function sglangRoutes(m: MockContext) {
  const { core, stats } = m;

  async function* generate(req: GenerateRequest, ctx: HandlerContext): AsyncGenerator<GenerateResponse> {
    stats.generates++;
    const id = req.requestId;
    if (!id) throw new ConnectError('request_id is required', Code.InvalidArgument);
    if (!req.tokenized) throw new ConnectError('tokenized input is required', Code.InvalidArgument);
    const sp = req.samplingParams;
    m.received.record({ requestId: id, protocol: 'sglang', json: () => toJson(GenerateRequestSchema, req, { useProtoFieldName: true }) as Record<string, unknown> });
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
    const n = Math.max(1, sp?.n ?? 1);
    const lastChunk = new Map<number, number[]>();
    let stream: AsyncGenerator<CoreOutput[]>;
    try {
      stream = runRequest(core, {
        id,
        prompt: req.tokenized.inputIds,
        n,
        maxNewTokens: sp?.maxNewTokens,
        minNewTokens: sp?.minNewTokens ?? 0,
        stopTokenIds: sp?.stopTokenIds ?? [],
        ignoreEos: sp?.ignoreEos ?? false,
        dpRank: req.dataParallelRank,
      }, ctx.signal, stats, m.coalesce, m.streamInterval);
      // Submit now so validation errors surface as the rpc's status.
      const first = await stream.next();
      if (first.done) return;
      yield* emit(first.value);
    } catch (err) {
      throw toConnect(err);
    }
    for await (const batch of stream) yield* emit(batch);

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
      generate,
      async abort(req) {
        stats.abortRpcs++;
        if (!core.abort(req.requestId)) {
          return create(AbortResponseSchema, { success: false, message: `no request ${req.requestId}` });
        }
        stats.aborts++;
        return create(AbortResponseSchema, { success: true });
      },
      async embed(req) {
        const ids = embedInput(req.requestId, req.tokenized?.inputIds, core.o.maxContextLength, core.o.vocabSize);
        const v = mockEmbedding(ids, m.embeddingDim, core.o.seed);
        return create(EmbedResponseSchema, { embedding: Array.from(v), embeddingDim: v.length, promptTokens: ids.length });
      },
      async healthCheck() {
        return create(HealthCheckResponseSchema, { healthy: m.healthy(), message: m.healthy() ? 'mock engine ok' : 'mock engine paused' });
      },
      async getModelInfo() {
        return create(GetModelInfoResponseSchema, {
          modelPath: m.modelPath,
          tokenizerPath: m.modelPath,
          isGeneration: true,
          servedModelName: m.servedModelName,
          maxContextLength: core.o.maxContextLength,
          maxReqInputLen: core.o.maxContextLength - 1,
          vocabSize: core.o.vocabSize,
          eosTokenIds: core.o.eosTokenIds,
          modelType: 'mock',
          architectures: ['PorticoMockEngine'],
          weightVersion: 'default',
        });
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
        const tps = core.throughput();
        const ranks = core.ranks.filter((r) => req.dpRank === undefined || r.id === req.dpRank);
        const loads = ranks.map((r) => {
          const l = m.rankLoad(r.id);
          return create(SchedulerLoadSchema, {
            dpRank: r.id,
            numRunningReqs: l.running,
            numWaitingReqs: l.waiting,
            numTotalReqs: l.running + l.waiting,
            numUsedTokens: l.usedTokens,
            maxTotalNumTokens: l.capacityTokens,
            tokenUsage: l.usage,
            genThroughput: tps / core.ranks.length,
            cacheHitRate: l.cacheHitRate,
            utilization: l.running / core.o.maxNumSeqs,
            maxRunningRequests: core.o.maxNumSeqs,
            numWaitingUncachedTokens: l.waitingTokens,
          });
        });
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
      async flushCache() {
        const ok = core.flushCache();
        return create(FlushCacheResponseSchema, { success: ok, message: ok ? 'flushed' : 'blocks in use; not flushed' });
      },
      subscribeKvEvents: (req, ctx) => subscribeKvEvents(core.hub, req, ctx, (r) => m.engineLoad(r)),
    });
  };
  const fast = fastRoute({
    path: `/${SglangScheduler.typeName}/Generate`,
    input: GenerateRequestSchema,
    output: GenerateResponseSchema,
    handler: generate,
  });
  const kv = fastRoute({
    path: `/${SglangScheduler.typeName}/SubscribeKvEvents`,
    input: SubscribeKvEventsRequestSchema,
    output: KvEventBatchSchema,
    handler: (req, ctx) => subscribeKvEvents(core.hub, req, ctx, (r) => m.engineLoad(r)),
  });
  return { routes, fast: [fast, kv] };
}

export function toConnect(err: unknown): unknown {
  if (err instanceof SimRequestError) {
    const code = /already running/.test(err.message) ? Code.AlreadyExists : Code.InvalidArgument;
    return new ConnectError(err.message, code);
  }
  return err;
}
