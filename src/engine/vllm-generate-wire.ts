// GenerateParams → vLLM engine GenerateRequest bytes, written by hand
// (proto/vllm_engine.proto). The same message buildVllmGenerateRequest()
// (vllm-client.ts) builds with protobuf-es, byte for byte: fields in number
// order, proto3 zeros left out, explicit-presence fields written when set
// (test/engine-wire.test.ts compares the two over every field).

import type { GenerateParams } from './types.js';
import { ProtoWriter, WIRE_FIXED32, WIRE_LEN, WIRE_VARINT } from './proto-writer.js';
import { writeMultimodal } from './multimodal-wire.js';

const w = new ProtoWriter();

/** One gRPC frame (5-byte prefix + GenerateRequest) for `p`, in one Buffer. */
export function encodeVllmGenerate(p: GenerateParams): Buffer {
  write(p);
  return w.finishFrame();
}

/** The same frame as the client sends it: in parts when an image's pixel tensor goes by reference. */
export function encodeVllmGenerateParts(p: GenerateParams): Buffer | Buffer[] {
  write(p);
  return w.finishFrameParts();
}

function write(p: GenerateParams): void {
  w.begin();
  // 1 request_id
  if (p.requestId !== '') w.tag(1, WIRE_LEN).string(p.requestId);
  // 2 tokenized (oneof input: always written)
  w.tag(2, WIRE_LEN).fork();
  const text = p.originalText ?? '';
  if (text !== '') w.tag(1, WIRE_LEN).string(text);
  w.packedUint32(2, p.inputIds, 'vllm.grpc.engine.TokenizedInput.input_ids', true);
  w.join();
  // 4 sampling_params
  w.tag(4, WIRE_LEN).fork();
  writeSampling(p);
  w.join();
  // 5 stream
  if (p.stream) w.tag(5, WIRE_VARINT).bool(true);
  // 7 mm_inputs
  if (p.multimodal) writeMultimodal(w, 7, p.multimodal, 'vllm');
  // 8 kv_transfer_params_json (optional: written when set, even empty)
  if (p.kvTransferParams !== undefined) w.tag(8, WIRE_LEN).string(p.kvTransferParams);
  // 9 data_parallel_rank (optional)
  if (p.dataParallelRank !== undefined) w.tag(9, WIRE_VARINT).int32(p.dataParallelRank, 'vllm.grpc.engine.GenerateRequest.data_parallel_rank');
}

function float(field: number, v: number, name: string): void {
  if (!Object.is(v, 0)) w.tag(field, WIRE_FIXED32).float(v, name);
}

function writeSampling(p: GenerateParams): void {
  // 1 temperature is optional: always set, so written even when 0.
  w.tag(1, WIRE_FIXED32).float(p.temperature ?? 1, 'vllm.grpc.engine.SamplingParams.temperature');
  float(2, p.topP ?? 1, 'vllm.grpc.engine.SamplingParams.top_p');
  // top_k 0 means "no top-k" here.
  const topK = p.topK === undefined || p.topK <= 0 ? 0 : p.topK;
  if (topK != 0) w.tag(3, WIRE_VARINT).uint32(topK, 'vllm.grpc.engine.SamplingParams.top_k');
  float(4, p.minP ?? 0, 'vllm.grpc.engine.SamplingParams.min_p');
  float(5, p.frequencyPenalty ?? 0, 'vllm.grpc.engine.SamplingParams.frequency_penalty');
  float(6, p.presencePenalty ?? 0, 'vllm.grpc.engine.SamplingParams.presence_penalty');
  float(7, p.repetitionPenalty ?? 1, 'vllm.grpc.engine.SamplingParams.repetition_penalty');
  if (p.maxNewTokens !== undefined) w.tag(8, WIRE_VARINT).uint32(p.maxNewTokens, 'vllm.grpc.engine.SamplingParams.max_tokens');
  const minTokens = p.minNewTokens ?? 0;
  if (minTokens != 0) w.tag(9, WIRE_VARINT).uint32(minTokens, 'vllm.grpc.engine.SamplingParams.min_tokens');
  if (p.stopTokenIds) w.packedUint32(11, p.stopTokenIds, 'vllm.grpc.engine.SamplingParams.stop_token_ids');
  // 12 skip_special_tokens, 13 spaces_between_special_tokens: Portico detokenizes itself.
  w.tag(12, WIRE_VARINT).bool(true);
  w.tag(13, WIRE_VARINT).bool(true);
  if (p.ignoreEos) w.tag(14, WIRE_VARINT).bool(true);
  const n = Math.max(1, p.n ?? 1);
  if (n != 0) w.tag(15, WIRE_VARINT).uint32(n, 'vllm.grpc.engine.SamplingParams.n');
  const c = p.constraint;
  if (c) {
    switch (c.kind) {
      case 'json_schema': w.tag(16, WIRE_LEN).string(c.value); break;
      case 'regex': w.tag(17, WIRE_LEN).string(c.value); break;
      case 'ebnf': w.tag(18, WIRE_LEN).string(c.value); break;
      case 'structural_tag': w.tag(19, WIRE_LEN).string(c.value); break;
      case 'json_object': w.tag(20, WIRE_VARINT).bool(true); break;
    }
  }
  // 22 logprobs = k: the sampled token's logprob plus the k best.
  if (p.logprobs === true) w.tag(22, WIRE_VARINT).int32(vllmTopCount(p.topLogprobs ?? 0), 'vllm.grpc.engine.SamplingParams.logprobs');
  if (p.promptLogprobs !== undefined) w.tag(23, WIRE_VARINT).int32(vllmTopCount(p.promptLogprobs), 'vllm.grpc.engine.SamplingParams.prompt_logprobs');
  if (p.seed !== undefined) w.tag(24, WIRE_VARINT).int32(Number(p.seed), 'vllm.grpc.engine.SamplingParams.seed');
  if (p.logitBias && p.logitBias.size > 0) {
    // 26 map<int32, float>: entries in the order of a plain object's keys, as
    // protobuf-es writes them (integer-like keys ascending), keys parsed back.
    const bias: Record<string, number> = {};
    for (const [id, b] of p.logitBias) bias[String(id)] = b;
    for (const key of Object.keys(bias)) {
      w.tag(26, WIRE_LEN).fork();
      w.tag(1, WIRE_VARINT).int32(Number.parseInt(key), 'vllm.grpc.engine.SamplingParams.logit_bias');
      w.tag(2, WIRE_FIXED32).float(bias[key]!, 'vllm.grpc.engine.SamplingParams.logit_bias');
      w.join();
    }
  }
}

/**
 * vLLM computes the sampled token's logprob plus the k best, but its gRPC servicer sends
 * the first k entries of that dict: the sampled token first, then the best. Asking for
 * k + 1 puts the true k best among what it sends (sorted, then cut to k, downstream);
 * capped at 20, vLLM's default --max-logprobs, which OpenAI's top_logprobs range matches.
 */
export function vllmTopCount(k: number): number {
  return k > 0 ? Math.min(k + 1, 20) : 0;
}
