// Per-request protobuf cost of the engine client, in isolation: GenerateRequest
// encoding (protobuf-es create + toBinary + gRPC framing, as the Connect path does,
// against the hand encoders the h2 path uses) and GenerateResponse decoding
// (protobuf-es fromBinary against the hand reader), for both protocols, on a
// short chat request (11 prompt tokens, max_tokens 1) and its one-token complete.
//
// Run: npm run build:ts && node dist/bench/engine-wire.bench.js [iterations]
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';

import { decodeGenerateResponse, SGLANG_RESPONSE, VLLM_RESPONSE } from '../src/engine/generate-response-wire.js';
import { frameMessage } from '../src/engine/grpc-h2.js';
import { buildGenerateRequest } from '../src/engine/sglang-client.js';
import { encodeSglangGenerate } from '../src/engine/sglang-generate-wire.js';
import type { GenerateParams } from '../src/engine/types.js';
import { buildVllmGenerateRequest } from '../src/engine/vllm-client.js';
import { encodeVllmGenerate } from '../src/engine/vllm-generate-wire.js';
import * as sgl from '../src/gen/sglang_scheduler_pb.js';
import * as vllm from '../src/gen/vllm_engine_pb.js';

const N = Number(process.argv[2] ?? 200_000);

const p: GenerateParams = {
  requestId: 'chatcmpl-8f2c1a7e3b5d4c6e9a0b1c2d',
  inputIds: Uint32Array.from([151644, 872, 198, 45764, 23811, 13, 151645, 198, 151644, 77091, 198]),
  stream: false, maxNewTokens: 1, temperature: 0.7, stopTokenIds: [151645, 151643],
};
const complete = { outputIds: [9707], finishReason: 'length', promptTokens: 11, completionTokens: 1, cachedTokens: 0 };
const sglBytes = toBinary(sgl.GenerateResponseSchema, create(sgl.GenerateResponseSchema, { requestId: p.requestId, response: { case: 'complete', value: complete } }));
const vllmBytes = toBinary(vllm.GenerateResponseSchema, create(vllm.GenerateResponseSchema, { response: { case: 'complete', value: complete } }));

const rows: Array<[string, () => unknown]> = [
  ['SGLang encode, protobuf-es', () => frameMessage(toBinary(sgl.GenerateRequestSchema, buildGenerateRequest(p)))],
  ['SGLang encode, hand', () => encodeSglangGenerate(p)],
  ['vLLM encode, protobuf-es', () => frameMessage(toBinary(vllm.GenerateRequestSchema, buildVllmGenerateRequest(p)))],
  ['vLLM encode, hand', () => encodeVllmGenerate(p)],
  ['SGLang decode, protobuf-es', () => fromBinary(sgl.GenerateResponseSchema, sglBytes)],
  ['SGLang decode, hand', () => decodeGenerateResponse(sglBytes, SGLANG_RESPONSE)],
  ['vLLM decode, protobuf-es', () => fromBinary(vllm.GenerateResponseSchema, vllmBytes)],
  ['vLLM decode, hand', () => decodeGenerateResponse(vllmBytes, VLLM_RESPONSE)],
];

let sink = 0;
const best = new Map<string, number>();
for (let round = 0; round < 4; round++) {
  for (const [name, f] of rows) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < N; i++) if (f()) sink++;
    const ns = Number(process.hrtime.bigint() - t) / N;
    if (round > 0) best.set(name, Math.min(best.get(name) ?? Infinity, ns));
  }
}
console.log(`| operation | ns per call (best of 3 rounds × ${N}) | protobuf-es / hand |`);
console.log('|---|---:|---:|');
for (let i = 0; i < rows.length; i += 2) {
  const a = best.get(rows[i]![0])!;
  const b = best.get(rows[i + 1]![0])!;
  console.log(`| ${rows[i]![0]} | ${a.toFixed(0)} | |`);
  console.log(`| ${rows[i + 1]![0]} | ${b.toFixed(0)} | ${(a / b).toFixed(1)}× |`);
}
if (sink < 0) console.log(sink);
