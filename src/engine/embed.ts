// The Embed rpc of both engine protocols: one tokenized input in, one pooled vector
// out. The clients (sglang-client.ts, vllm-client.ts) delegate here so that the
// embedding path stays apart from generation.
//
// Wire facts (proto/sglang_scheduler.proto, proto/vllm_engine.proto):
//  - SGLang: EmbedRequest{request_id, tokenized, data_parallel_rank (plain int32:
//    0 when not pinned)}; EmbedResponse{embedding_dim = 4, embedding = 5, prompt_tokens = 6}.
//  - vLLM: EmbedRequest{request_id, tokenized} (no rank); EmbedResponse{embedding = 1,
//    prompt_tokens = 2, embedding_dim = 3}.

import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type Client } from '@connectrpc/connect';

import { EmbedRequestSchema as SglangEmbedRequestSchema, type SglangScheduler } from '../gen/sglang_scheduler_pb.js';
import { EmbedRequestSchema as VllmEmbedRequestSchema, type VllmEngine } from '../gen/vllm_engine_pb.js';
import { EngineError } from './errors.js';
import type { EmbedParams, EmbedResult } from './types.js';

/**
 * Transport failures as EngineErrors; a rejected input keeps only the engine's own
 * reason as its message (it is shown to the client as a 400).
 */
function failure(err: unknown, url: string, p: EmbedParams): EngineError {
  if (!(err instanceof EngineError)) {
    const ce = ConnectError.from(err);
    if (ce.code === Code.InvalidArgument || ce.code === Code.OutOfRange) {
      return new EngineError('invalid_argument', `Embed(${p.requestId}) on ${url} rejected: ${ce.rawMessage}`, url, { cause: err, engineMessage: ce.rawMessage, requestId: p.requestId });
    }
    // An UNAVAILABLE status the worker answered itself (Connect made it from the trailers, so
    // it has no transport error as its cause): a strike, not a lost connection.
    if (ce.code === Code.Unavailable && ce.cause === undefined) {
      return new EngineError('unavailable', `Embed(${p.requestId}) on ${url}: the worker answered UNAVAILABLE: ${ce.rawMessage}`, url, { cause: err, engineMessage: ce.rawMessage, requestId: p.requestId, health: 'strike' });
    }
  }
  return EngineError.from(err, url, `Embed(${p.requestId})`, p.requestId);
}

function result(url: string, r: { embedding: number[]; embeddingDim: number; promptTokens: number }, p: EmbedParams): EmbedResult {
  const dim = r.embeddingDim || r.embedding.length;
  if (dim === 0 || r.embedding.length !== dim) {
    throw new EngineError('internal', `Embed(${p.requestId}) answered ${r.embedding.length} values for dimension ${r.embeddingDim}`, url);
  }
  return { embedding: Float32Array.from(r.embedding), promptTokens: r.promptTokens || p.inputIds.length };
}

export async function sglangEmbed(rpc: Client<typeof SglangScheduler>, url: string, p: EmbedParams, signal: AbortSignal): Promise<EmbedResult> {
  const req = create(SglangEmbedRequestSchema, {
    requestId: p.requestId,
    tokenized: { originalText: '', inputIds: Array.from(p.inputIds) },
    dataParallelRank: p.dataParallelRank ?? 0,
  });
  try {
    return result(url, await rpc.embed(req, { signal }), p);
  } catch (err) {
    throw failure(err, url, p);
  }
}

export async function vllmEmbed(rpc: Client<typeof VllmEngine>, url: string, p: EmbedParams, signal: AbortSignal): Promise<EmbedResult> {
  const req = create(VllmEmbedRequestSchema, {
    requestId: p.requestId,
    tokenized: { originalText: '', inputIds: Array.from(p.inputIds) },
  });
  try {
    return result(url, await rpc.embed(req, { signal }), p);
  } catch (err) {
    throw failure(err, url, p);
  }
}
