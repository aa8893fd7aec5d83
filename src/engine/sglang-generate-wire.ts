// GenerateParams → SGLang scheduler GenerateRequest bytes, written by hand
// (proto/sglang_scheduler.proto). The same message buildGenerateRequest()
// (sglang-client.ts) builds with protobuf-es, byte for byte: fields in number
// order, proto3 zeros left out, explicit-presence fields written when set
// (test/engine-wire.test.ts compares the two over every field).

import type { GenerateParams } from './types.js';
import { ProtoWriter, WIRE_FIXED32, WIRE_LEN, WIRE_VARINT } from './proto-writer.js';
import { writeMultimodal } from './multimodal-wire.js';

const w = new ProtoWriter();

/**
 * SGLang's scheduler protocol has no seed field: the seed travels in
 * SamplingParams.custom_params under this key, as a decimal string (a Struct number is a
 * double, which would round a 64-bit seed past 2^53).
 */
export const SGLANG_SEED_KEY = 'seed';

/** The JSON schema SGLang's own OpenAI server uses for "any JSON object". */
export const SGLANG_JSON_OBJECT_SCHEMA = '{"type":"object"}';

/** One gRPC frame (5-byte prefix + GenerateRequest) for `p`, in one Buffer. */
export function encodeSglangGenerate(p: GenerateParams): Buffer {
  write(p);
  return w.finishFrame();
}

/** The same frame as the client sends it: in parts when an image's pixel tensor goes by reference. */
export function encodeSglangGenerateParts(p: GenerateParams): Buffer | Buffer[] {
  write(p);
  return w.finishFrameParts();
}

function write(p: GenerateParams): void {
  w.begin();
  // 1 request_id
  if (p.requestId !== '') w.tag(1, WIRE_LEN).string(p.requestId);
  // 2 tokenized
  w.tag(2, WIRE_LEN).fork();
  const text = p.originalText ?? '';
  if (text !== '') w.tag(1, WIRE_LEN).string(text);
  w.packedUint32(2, p.inputIds, 'sglang.grpc.scheduler.TokenizedInput.input_ids', true);
  w.join();
  // 3 mm_inputs
  if (p.multimodal) writeMultimodal(w, 3, p.multimodal, 'sglang');
  // 4 sampling_params
  w.tag(4, WIRE_LEN).fork();
  writeSampling(p);
  w.join();
  // 5 return_logprob, 6 logprob_start_len, 7 top_logprobs_num
  if (p.logprobs === true || p.promptLogprobs !== undefined) w.tag(5, WIRE_VARINT).bool(true);
  // -1: no prompt logprobs, only output ones; 0: from the first prompt token.
  if (p.promptLogprobs === undefined) w.tag(6, WIRE_VARINT).int32(-1, 'sglang.grpc.scheduler.GenerateRequest.logprob_start_len');
  const top = Math.max(p.logprobs === true ? (p.topLogprobs ?? 0) : 0, p.promptLogprobs ?? 0);
  if (top != 0) w.tag(7, WIRE_VARINT).int32(top, 'sglang.grpc.scheduler.GenerateRequest.top_logprobs_num');
  // 10 disaggregated_params: DisaggregatedParams{1 bootstrap_host, 2 bootstrap_port, 3 bootstrap_room}
  const pd = p.bootstrap;
  if (pd) {
    w.tag(10, WIRE_LEN).fork();
    if (pd.host !== '') w.tag(1, WIRE_LEN).string(pd.host);
    if (pd.port != 0) w.tag(2, WIRE_VARINT).int32(pd.port, 'sglang.grpc.scheduler.DisaggregatedParams.bootstrap_port');
    if (pd.room != 0) w.tag(3, WIRE_VARINT).int32(pd.room, 'sglang.grpc.scheduler.DisaggregatedParams.bootstrap_room');
    w.join();
  }
  // 15 lora_id
  const lora = p.loraId ?? '';
  if (lora !== '') w.tag(15, WIRE_LEN).string(lora);
  // 16 data_parallel_rank (optional)
  if (p.dataParallelRank !== undefined) w.tag(16, WIRE_VARINT).int32(p.dataParallelRank, 'sglang.grpc.scheduler.GenerateRequest.data_parallel_rank');
  // 17 stream
  if (p.stream) w.tag(17, WIRE_VARINT).bool(true);
}

function float(field: number, v: number, name: string): void {
  if (!Object.is(v, 0)) w.tag(field, WIRE_FIXED32).float(v, name);
}

function writeSampling(p: GenerateParams): void {
  float(1, p.temperature ?? 1, 'sglang.grpc.scheduler.SamplingParams.temperature');
  float(2, p.topP ?? 1, 'sglang.grpc.scheduler.SamplingParams.top_p');
  const topK = p.topK === undefined || p.topK <= 0 ? -1 : p.topK;
  if (topK != 0) w.tag(3, WIRE_VARINT).int32(topK, 'sglang.grpc.scheduler.SamplingParams.top_k');
  float(4, p.minP ?? 0, 'sglang.grpc.scheduler.SamplingParams.min_p');
  float(5, p.frequencyPenalty ?? 0, 'sglang.grpc.scheduler.SamplingParams.frequency_penalty');
  float(6, p.presencePenalty ?? 0, 'sglang.grpc.scheduler.SamplingParams.presence_penalty');
  float(7, p.repetitionPenalty ?? 1, 'sglang.grpc.scheduler.SamplingParams.repetition_penalty');
  if (p.maxNewTokens !== undefined) w.tag(8, WIRE_VARINT).uint32(p.maxNewTokens, 'sglang.grpc.scheduler.SamplingParams.max_new_tokens');
  if (p.stopTokenIds) w.packedUint32(10, p.stopTokenIds, 'sglang.grpc.scheduler.SamplingParams.stop_token_ids');
  // 11 skip_special_tokens, 12 spaces_between_special_tokens: Portico detokenizes itself.
  w.tag(11, WIRE_VARINT).bool(true);
  w.tag(12, WIRE_VARINT).bool(true);
  const c = p.constraint;
  if (c) {
    switch (c.kind) {
      case 'regex': w.tag(13, WIRE_LEN).string(c.value); break;
      case 'json_schema': w.tag(14, WIRE_LEN).string(c.value); break;
      case 'json_object': w.tag(14, WIRE_LEN).string(SGLANG_JSON_OBJECT_SCHEMA); break;
      case 'ebnf': w.tag(15, WIRE_LEN).string(c.value); break;
      case 'structural_tag': w.tag(16, WIRE_LEN).string(c.value); break;
    }
  }
  const n = Math.max(1, p.n ?? 1);
  if (n != 0) w.tag(17, WIRE_VARINT).uint32(n, 'sglang.grpc.scheduler.SamplingParams.n');
  const minNew = p.minNewTokens ?? 0;
  if (minNew != 0) w.tag(18, WIRE_VARINT).uint32(minNew, 'sglang.grpc.scheduler.SamplingParams.min_new_tokens');
  if (p.ignoreEos) w.tag(19, WIRE_VARINT).bool(true);
  if (p.logitBias && p.logitBias.size > 0) {
    // 22 map<string, float>: entries in the order of a plain object's keys, as
    // protobuf-es writes them (integer-like keys ascending).
    const bias: Record<string, number> = {};
    for (const [id, b] of p.logitBias) bias[String(id)] = b;
    for (const key of Object.keys(bias)) {
      w.tag(22, WIRE_LEN).fork();
      w.tag(1, WIRE_LEN).string(key);
      w.tag(2, WIRE_FIXED32).float(bias[key]!, 'sglang.grpc.scheduler.SamplingParams.logit_bias');
      w.join();
    }
  }
  if (p.seed !== undefined) {
    // 23 custom_params: Struct{1 fields: map<string, Value{3 string_value}>}
    w.tag(23, WIRE_LEN).fork();
    w.tag(1, WIRE_LEN).fork();
    w.tag(1, WIRE_LEN).string(SGLANG_SEED_KEY);
    w.tag(2, WIRE_LEN).fork();
    w.tag(3, WIRE_LEN).string(String(p.seed));
    w.join();
    w.join();
    w.join();
  }
}
