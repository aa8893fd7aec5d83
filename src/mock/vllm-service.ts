// The mock engine's vLLM engine service (vllm.grpc.engine.VllmEngine).
//
// Stream mode, as vLLM's servicer (smg-grpc-servicer) sends it: a chunk per
// batch of new tokens of a choice (several ids when the reader lags) whose
// completion_tokens counts only that chunk's ids (a delta; the reader sums),
// then a GenerateComplete repeating the last chunk's ids and delta count.
// stream=false: one GenerateComplete per choice carrying every output id and
// the total. Abort takes several ids; their open choices end with
// finish_reason "abort".

import { create, toJson } from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';

import {
  AbortResponseSchema,
  GenerateRequestSchema,
  GenerateResponseSchema,
  GetLoadsResponseSchema,
  GetModelInfoResponseSchema,
  GetServerInfoResponseSchema,
  VllmEngine,
  type GenerateRequest,
  type TensorData,
  type GenerateResponse,
} from '../gen/vllm_engine_pb.js';
import { mockInputLogprobs, mockOutputLogprobs } from './logprobs.js';
import type { MockContext } from './mock-context.js';
import { traceContextOf } from './received.js';
import { fastRoutes, modelInfoFields, rankLoads, serveGenerate, sharedHandlers } from './service-common.js';
import type { CoreOutput } from './sim-core.js';
import { vllmLeg } from './vllm-pd.js';
import { multimodalProblem } from './multimodal-check.js';

export function vllmRoutes(m: MockContext) {
  const { core, stats } = m;

  async function* generate(req: GenerateRequest, ctx: HandlerContext): AsyncGenerator<GenerateResponse> {
    stats.generates++;
    const id = req.requestId;
    if (!id) throw new ConnectError('request_id is required', Code.InvalidArgument);
    if (req.input.case !== 'tokenized') throw new ConnectError('tokenized input is required', Code.InvalidArgument);
    const mm = req.mmInputs;
    const inline = (t: TensorData | undefined) => (t ? { data: t.payload.case === 'inline' ? t.payload.value : new Uint8Array(0), shape: t.shape, dtype: t.dtype } : undefined);
    const mmBad = mm && multimodalProblem(req.input.value.inputIds, {
      pixelValues: inline(mm.pixelValues),
      tensors: Object.fromEntries(Object.entries(mm.modelSpecificTensors).map(([k, t]) => [k, inline(t)!])),
      imTokenId: mm.imTokenId,
      placeholders: mm.mmPlaceholders,
      hashes: mm.mmHashes,
      batchedKeys: mm.batchedKeys,
      flatKeys: mm.flatKeys,
    }, remotePrefill(req.kvTransferParamsJson));
    if (mmBad) throw new ConnectError(`mm_inputs: ${mmBad}`, Code.InvalidArgument);
    const sp = req.samplingParams;
    m.received.record({ requestId: id, protocol: 'vllm', ...traceContextOf(ctx), json: () => toJson(GenerateRequestSchema, req, { useProtoFieldName: true }) as Record<string, unknown> });
    // vLLM's logprobs = k: the sampled token's logprob plus k alternatives.
    const top = sp?.logprobs ?? -1;
    const logprobs = (ids: number[]) => (top >= 0 ? mockOutputLogprobs(ids, top, core.o.vocabSize) : undefined);
    // vLLM's prompt_logprobs = k, on each choice's first chunk.
    const promptSent = new Set<number>();
    const inputLogprobs = (index: number) => {
      if (sp?.promptLogprobs === undefined || promptSent.has(index) || req.input.case !== 'tokenized') return undefined;
      promptSent.add(index);
      return mockInputLogprobs(req.input.value.inputIds, sp.promptLogprobs, core.o.vocabSize);
    };
    const lastChunk = new Map<number, number[]>();
    const leg = vllmLeg(m, req);
    // A prefill leg's params go out on a choice that ended normally (NIXL keeps the blocks only then).
    const kvOut = (reason: string) => (leg.returned !== undefined && (reason === 'length' || reason === 'stop') ? { kvTransferParamsJson: leg.returned, kvTransferParams: leg.legacy } : {});
    yield* serveGenerate(m, {
      id,
      prompt: req.input.value.inputIds,
      n: Math.max(1, sp?.n ?? 1),
      maxNewTokens: sp?.maxTokens,
      minNewTokens: sp?.minTokens ?? 0,
      stopTokenIds: sp?.stopTokenIds ?? [],
      ignoreEos: sp?.ignoreEos ?? false,
      seed: sp?.seed,
      dpRank: req.dataParallelRank,
    }, ctx, emit, leg.plan);

    function* emit(batch: CoreOutput[]): Generator<GenerateResponse> {
      for (const o of batch) {
        if (o.kind === 'tokens') {
          if (!req.stream) continue;
          lastChunk.set(o.index, o.tokenIds);
          yield create(GenerateResponseSchema, {
            response: {
              case: 'chunk',
              value: {
                tokenIds: o.tokenIds,
                promptTokens: o.promptTokens,
                completionTokens: o.tokenIds.length,
                cachedTokens: o.cachedTokens,
                index: o.index,
                outputLogprobs: logprobs(o.tokenIds),
                inputLogprobs: inputLogprobs(o.index),
              },
            },
          });
        } else {
          const last = o.reason === 'abort' ? [] : lastChunk.get(o.index) ?? [];
          yield create(GenerateResponseSchema, {
            response: {
              case: 'complete',
              value: {
                outputIds: req.stream ? last : o.outputIds,
                outputLogprobs: logprobs(req.stream ? last : o.outputIds),
                finishReason: o.reason,
                promptTokens: o.promptTokens,
                completionTokens: req.stream ? last.length : o.completionTokens,
                cachedTokens: o.cachedTokens,
                index: o.index,
                matchedStop: o.matchedTokenId !== undefined
                  ? { case: 'matchedTokenId', value: o.matchedTokenId }
                  : { case: undefined },
                ...kvOut(o.reason),
              },
            },
          });
        }
      }
    }
  }

  const routes = (router: ConnectRouter) => {
    router.service(VllmEngine, {
      ...sharedHandlers(m),
      generate,
      async abort(req) {
        stats.abortRpcs++;
        for (const id of req.requestIds) {
          // A PD leg waiting for its KV hand-over is outside the scheduler.
          m.pending.abort(id);
          if (core.abort(id)) stats.aborts++;
        }
        return create(AbortResponseSchema);
      },
      async getModelInfo() {
        return create(GetModelInfoResponseSchema, modelInfoFields(m));
      },
      async getServerInfo() {
        const args = m.serverArgs();
        return create(GetServerInfoResponseSchema, {
          activeRequests: core.active,
          uptimeSeconds: (Date.now() - m.startedAt.getTime()) / 1000,
          serverType: 'vllm-grpc',
          dataParallelSize: core.ranks.length,
          blockSize: core.o.blockSize,
          kvCacheDtype: 'auto',
          modelDtype: 'torch.bfloat16',
          maxNumSeqs: core.o.maxNumSeqs,
          engineReasoningParser: typeof args['reasoning_parser'] === 'string' ? args['reasoning_parser'] : '',
          kvConnector: m.kvConnector,
          kvRole: m.role === 'prefill' ? 'kv_producer' : m.role === 'decode' ? 'kv_consumer' : '',
          kvEngineId: m.kvEngineId,
        });
      },
      async getLoads(req) {
        return create(GetLoadsResponseSchema, {
          timestamp: new Date().toISOString(),
          version: 'portico-mock',
          dpRankCount: core.ranks.length,
          loads: rankLoads(m, req.dpRank),
        });
      },
    });
  };
  return { routes, fast: fastRoutes(m, VllmEngine, GenerateRequestSchema, GenerateResponseSchema, generate) };
}

/** A decode leg that takes its prompt's KV from a prefill worker (kv_transfer_params do_remote_prefill). */
function remotePrefill(json: string | undefined): boolean {
  if (!json) return false;
  try {
    return (JSON.parse(json) as { do_remote_prefill?: unknown }).do_remote_prefill === true;
  } catch {
    return false;
  }
}
