// The hand-written GenerateRequest encoders (what the h2 transport sends) against
// protobuf-es encoding the request buildGenerateRequest / buildVllmGenerateRequest
// build (what the Connect transport sends): the same bytes for every field Portico
// sets, defaults, edge values and sizes that move length prefixes; the same failure
// for a value the wire type cannot hold. Then the hand GenerateResponse reader
// against protobuf-es fromBinary.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';

import * as sgl from '../src/gen/sglang_scheduler_pb.js';
import * as vllm from '../src/gen/vllm_engine_pb.js';
import { decodeGenerateResponse, SGLANG_RESPONSE, VLLM_RESPONSE } from '../src/engine/generate-response-wire.js';
import { toDone, type WireChunk, type WireComplete, type WireResponse } from '../src/engine/generate-stream.js';
import { frameMessage } from '../src/engine/grpc-h2.js';
import { buildGenerateRequest } from '../src/engine/sglang-client.js';
import { encodeSglangGenerate, encodeSglangGenerateParts } from '../src/engine/sglang-generate-wire.js';
import type { EngineMultimodal, EngineTensor, GenerateParams } from '../src/engine/types.js';
import { buildVllmGenerateRequest } from '../src/engine/vllm-client.js';
import { encodeVllmGenerate, encodeVllmGenerateParts } from '../src/engine/vllm-generate-wire.js';
import { gridOnly } from '../src/engine/disaggregation.js';
import { ApiError } from '../src/protocol/errors.js';

const ids = (n: number, start = 0) => Uint32Array.from({ length: n }, (_, i) => start + i * 997);
const base: GenerateParams = { requestId: 'chatcmpl-1', inputIds: Uint32Array.from([1, 2, 3]), stream: false };

const f32 = (n: number, shape: number[]): EngineTensor => ({ data: new Uint8Array(Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 2).buffer), shape, dtype: 'float32' });
const i64 = (vals: number[], shape: number[]): EngineTensor => ({ data: new Uint8Array(BigInt64Array.from(vals.map(BigInt)).buffer), shape, dtype: 'int64' });
/** Two Qwen-VL images (grids 1×2×4 and 1×4×2: 8 patches, 2 tokens each). */
const qwenImages = (rows: number): EngineMultimodal => ({
  pixelValues: f32(rows * 1176, [rows, 1176]),
  modelTensors: [['image_grid_thw', i64([1, 2, 4, 1, 4, 2], [2, 3])], ['patches_per_image', i64([rows / 2, rows / 2], [2])]],
  imTokenId: 151655,
  placeholders: [{ offset: 4, length: 2 }, { offset: 9, length: 2 }],
  hashes: ['a'.repeat(64), 'b'.repeat(64)],
  batchedKeys: ['image_grid_thw', 'patches_per_image'],
  flatKeys: [['pixel_values', 'patches_per_image']],
  keepOnCpuKeys: ['image_grid_thw'],
});

const cases: Array<[string, GenerateParams]> = [
  ['defaults only', base],
  ['stream', { ...base, stream: true }],
  ['empty request id, no input ids', { requestId: '', inputIds: new Uint32Array(0), stream: false }],
  ['every sampling field', {
    ...base, originalText: 'Say hello.', maxNewTokens: 7, minNewTokens: 2, temperature: 0.5, topP: 0.9, topK: 40,
    minP: 0.05, frequencyPenalty: 0.1, presencePenalty: -0.2, repetitionPenalty: 1.1, stopTokenIds: [3, 4, 151645],
    ignoreEos: true, seed: 1234n, n: 3, loraId: 'adapter-1', dataParallelRank: 2, stream: true,
  }],
  ['zeros where defaults are not zero', { ...base, temperature: 0, topP: 0, repetitionPenalty: 0, maxNewTokens: 0, n: 0, topK: 0, dataParallelRank: 0 }],
  ['negative zero and tiny floats', { ...base, temperature: -0, minP: 1e-50, frequencyPenalty: -0 }],
  ['infinities and NaN', { ...base, temperature: Infinity, topP: NaN, presencePenalty: -Infinity }],
  ['max values', { ...base, maxNewTokens: 0xffffffff, topK: 0x7fffffff, minNewTokens: 0xfffffffe, seed: 0x7fffffffn, dataParallelRank: -1 }],
  ['negative seed', { ...base, seed: -7n }],
  ['top_k negative means disabled', { ...base, topK: -5 }],
  ['empty stop ids and logit bias', { ...base, stopTokenIds: [], logitBias: new Map() }],
  ['logit bias, keys out of order', { ...base, logitBias: new Map([[500, -100], [3, 0], [151643, 100], [0, 2.5]]) }],
  ['constraint json_schema', { ...base, constraint: { kind: 'json_schema', value: '{"type":"object","properties":{"a":{"type":"integer"}}}' } }],
  ['constraint json_object', { ...base, constraint: { kind: 'json_object', value: '' } }],
  ['constraint regex', { ...base, constraint: { kind: 'regex', value: '[a-z]+\\d{2}' } }],
  ['constraint ebnf', { ...base, constraint: { kind: 'ebnf', value: 'root ::= "yes" | "no"' } }],
  ['constraint structural_tag', { ...base, constraint: { kind: 'structural_tag', value: '{"type":"structural_tag"}' } }],
  ['constraint with empty value', { ...base, constraint: { kind: 'regex', value: '' } }],
  ['logprobs', { ...base, logprobs: true }],
  ['logprobs with top', { ...base, logprobs: true, topLogprobs: 5 }],
  ['top logprobs without logprobs', { ...base, logprobs: false, topLogprobs: 5 }],
  ['prompt logprobs', { ...base, promptLogprobs: 0 }],
  ['prompt and output logprobs', { ...base, logprobs: true, topLogprobs: 2, promptLogprobs: 7 }],
  ['non-ASCII text', { ...base, originalText: 'Grüße, 世界 🌍', requestId: 'req-é' }],
  ['127- and 128-char text', { ...base, originalText: 'a'.repeat(127), loraId: 'b'.repeat(128) }],
  ['long text (3-byte length)', { ...base, originalText: 'Привет мир. '.repeat(1500) }],
  ['many input ids (2- and 3-byte lengths)', { ...base, inputIds: ids(40_000, 5) }],
  ['a frame over 1 MiB (the scratch buffer shrinks after it)', { ...base, inputIds: ids(300_000, 3_000_000) }],
  ['large ids', { ...base, inputIds: Uint32Array.from([0, 127, 128, 16383, 16384, 0xffffffff]) }],
  ['many stop ids', { ...base, stopTokenIds: Array.from(ids(300, 1)) }],
  // Disaggregated serving: each protocol writes its own field and ignores the other's.
  ['PD bootstrap', { ...base, bootstrap: { host: '10.0.0.7', port: 8998, room: 0x7fffffff } }],
  ['PD bootstrap with zeros (an empty message)', { ...base, bootstrap: { host: '', port: 0, room: 0 } }],
  ['PD bootstrap, IPv6 host, small room, streamed', { ...base, stream: true, bootstrap: { host: 'fd00::1', port: 1, room: 5 }, dataParallelRank: 1 }],
  ['kv transfer params', { ...base, kvTransferParams: '{"do_remote_decode":true,"do_remote_prefill":false}' }],
  ['kv transfer params, empty string (present)', { ...base, kvTransferParams: '' }],
  ['kv transfer params, long and non-ASCII', { ...base, stream: true, dataParallelRank: 0, kvTransferParams: JSON.stringify({ remote_block_ids: [Array.from(ids(200, 1))], remote_host: 'höst' }) }],
  ['both PD fields', { ...base, bootstrap: { host: 'h', port: 2, room: 3 }, kvTransferParams: '{}' }],
  // Images: MultimodalInputs (its pixel tensor written with precomputed length prefixes).
  ['two Qwen-VL images', { ...base, inputIds: ids(14, 1), multimodal: qwenImages(16) }],
  ['images, a pixel tensor over 1 MiB, streamed with PD fields', { ...base, stream: true, inputIds: ids(40, 1), multimodal: qwenImages(256), kvTransferParams: '{}', bootstrap: { host: 'h', port: 2, room: 3 } }],
  ['a decode leg\'s grid-only images (no pixel tensor)', { ...base, inputIds: ids(14, 1), multimodal: gridOnly(qwenImages(16)), kvTransferParams: '{"do_remote_prefill":true}' }],
  ['one CLIP-style image at offset 0, no model tensors', { ...base, multimodal: { pixelValues: f32(48, [1, 3, 4, 4]), modelTensors: [], imTokenId: 0, placeholders: [{ offset: 0, length: 3 }], hashes: ['h'], batchedKeys: ['pixel_values'], flatKeys: [], keepOnCpuKeys: [] } }],
];

const protocols = [
  {
    name: 'SGLang',
    encode: encodeSglangGenerate,
    parts: encodeSglangGenerateParts,
    reference: (p: GenerateParams) => frameMessage(toBinary(sgl.GenerateRequestSchema, buildGenerateRequest(p))),
    decode: (b: Uint8Array) => fromBinary(sgl.GenerateRequestSchema, b),
    // SGLang's seed is an int64 in custom_params (vLLM's an int32: a larger one is refused when read)
    extra: [['a seed past int32', { ...base, seed: 2n ** 40n + 5n }], ['the int64 edges', { ...base, seed: 2n ** 63n - 1n }], ['the lowest int64', { ...base, seed: -(2n ** 63n) }]] as Array<[string, GenerateParams]>,
  },
  {
    name: 'vLLM',
    encode: encodeVllmGenerate,
    parts: encodeVllmGenerateParts,
    reference: (p: GenerateParams) => frameMessage(toBinary(vllm.GenerateRequestSchema, buildVllmGenerateRequest(p))),
    decode: (b: Uint8Array) => fromBinary(vllm.GenerateRequestSchema, b),
    extra: [] as Array<[string, GenerateParams]>,
  },
];

for (const proto of protocols) {
  describe(`${proto.name} GenerateRequest encoder`, () => {
    for (const [name, p] of [...cases, ...proto.extra]) {
      test(`same bytes as protobuf-es: ${name}`, () => {
        const want = proto.reference(p);
        const got = proto.encode(p);
        assert.equal(got.toString('hex'), want.toString('hex'));
      });
    }

    test('in parts, as the client sends it: the same bytes, the pixel tensor by reference, and no part changed by the next encode', () => {
      for (const [, p] of cases) {
        const parts = proto.parts(p);
        const joined = Buffer.isBuffer(parts) ? parts : Buffer.concat(parts);
        assert.equal(joined.toString('hex'), proto.reference(p).toString('hex'));
        const pixels = p.multimodal?.pixelValues?.data;
        if (pixels === undefined) {
          assert.ok(Buffer.isBuffer(parts), 'one buffer without an image');
          continue;
        }
        assert.ok(Array.isArray(parts) && parts.some((x) => x.buffer === pixels.buffer && x.byteOffset === pixels.byteOffset), 'the tensor is sent from its own memory');
        const copy = Buffer.from(joined);
        proto.parts(cases.find(([n]) => n.startsWith('every'))![1]);
        assert.deepEqual(Buffer.concat(parts as Buffer[]), copy);
      }
    });

    test('consecutive encodes do not share or leak bytes', () => {
      const big = proto.encode(cases.find(([n]) => n.startsWith('every'))![1]);
      const bigCopy = Buffer.from(big);
      const small = proto.encode(base);
      assert.deepEqual(big, bigCopy);
      assert.equal(small.toString('hex'), proto.reference(base).toString('hex'));
      assert.equal(small.readUInt32BE(1), small.length - 5);
      assert.deepEqual(proto.decode(small.subarray(5)), proto.decode(proto.reference(base).subarray(5)));
    });

    for (const [name, p] of [
      ['fractional max tokens', { ...base, maxNewTokens: 1.5 }],
      ['max tokens past uint32', { ...base, maxNewTokens: 2 ** 32 }],
      ['negative stop id', { ...base, stopTokenIds: [5, -1] }],
      ['NaN choices', { ...base, n: NaN }],
      ['float past float32', { ...base, temperature: 1e39 }],
      ['fractional data-parallel rank', { ...base, dataParallelRank: 0.5 }],
      ...(proto.name === 'SGLang' ? [['bootstrap room past int32', { ...base, bootstrap: { host: 'h', port: 1, room: 2 ** 31 } }], ['fractional bootstrap port', { ...base, bootstrap: { host: 'h', port: 1.5, room: 1 } }]] : []),
    ] as Array<[string, GenerateParams]>) {
      test(`a value the wire type cannot hold throws the same error in both: ${name}`, () => {
        let want = '';
        assert.throws(() => proto.reference(p), (e: Error) => ((want = e.message), /cannot encode field .* to binary: invalid/.test(e.message)));
        assert.throws(() => proto.encode(p), (e: Error) => e.message === want);
        // a backstop behind the readers' range checks: a client value, so a 400, never a 500
        assert.throws(() => proto.encode(p), (e: unknown) => ApiError.from(e).status === 400 && ApiError.from(e).type === 'invalid_request_error');
      });
    }
  });
}

// Responses: the hand reader (h2 transport) against protobuf-es fromBinary,
// projected onto the fields generate-stream.ts reads.
type AnyResponse = { response: { case: string | undefined; value?: Record<string, unknown> } };

function project(r: AnyResponse): WireResponse {
  const lp = (l: any) => l === undefined ? undefined : {
    tokenLogprobs: [...l.tokenLogprobs],
    topLogprobs: l.topLogprobs.map((t: any) => ({ values: [...t.values], tokenIds: [...t.tokenIds] })),
  };
  const v = r.response.value as any;
  if (r.response.case === 'chunk') {
    return { response: { case: 'chunk', value: {
      tokenIds: [...v.tokenIds], promptTokens: v.promptTokens, completionTokens: v.completionTokens, cachedTokens: v.cachedTokens,
      index: v.index, outputLogprobs: lp(v.outputLogprobs),
      inputLogprobs: v.inputLogprobs === undefined ? undefined : {
        tokenLogprobs: v.inputLogprobs.tokenLogprobs.map((x: any) => (x.value === undefined ? {} : { value: x.value })),
        topLogprobs: lp(v.inputLogprobs)!.topLogprobs,
      },
    } } };
  }
  if (r.response.case === 'complete') {
    return { response: { case: 'complete', value: {
      outputIds: [...v.outputIds], finishReason: v.finishReason, promptTokens: v.promptTokens, completionTokens: v.completionTokens,
      cachedTokens: v.cachedTokens, index: v.index, outputLogprobs: lp(v.outputLogprobs),
      matchedStop: v.matchedStop.case === undefined ? { case: undefined } : { case: v.matchedStop.case, value: v.matchedStop.value },
      kvTransferParamsJson: v.kvTransferParamsJson,
      kvTransferParams: v.kvTransferParams === undefined ? undefined : { remoteHost: v.kvTransferParams.remoteHost, remotePort: v.kvTransferParams.remotePort },
    } } };
  }
  return { response: { case: undefined } };
}

const outLp = { tokenLogprobs: [-0.5, -1.25, -9999, 0], tokenIds: [7, 8, 9, 10], topLogprobs: [{ values: [-0.1, -2.5], tokenIds: [7, 100000] }, { values: [], tokenIds: [] }] };
const inLp = { tokenLogprobs: [{}, { value: -3.5 }, { value: 0 }], tokenIds: [1, 2, 3], topLogprobs: [{ values: [-1], tokenIds: [4] }] };
const chunkFields = { tokenIds: [5, 128, 0xffffffff], promptTokens: 11, completionTokens: 3, cachedTokens: 4, index: 2 };
const completeFields = { outputIds: [1, 2, 3, 151645], finishReason: 'stop', promptTokens: 11, completionTokens: 4, cachedTokens: 8, index: 1 };

const NIXL_PARAMS = '{"do_remote_prefill": true, "do_remote_decode": false, "remote_block_ids": [[1, 2, 3]], "remote_engine_id": "e-1", "remote_request_id": "r-1", "remote_host": "10.0.0.9", "remote_port": 5600, "tp_size": 1}';

const responseCases: Array<[string, Record<string, unknown>]> = [
  ['empty response', {}],
  ['empty chunk', { response: { case: 'chunk', value: {} } }],
  ['empty complete', { response: { case: 'complete', value: {} } }],
  ['chunk with every read field', { response: { case: 'chunk', value: { ...chunkFields, outputLogprobs: outLp, inputLogprobs: inLp } } }],
  ['chunk, logprobs present but empty', { response: { case: 'chunk', value: { tokenIds: [1], outputLogprobs: {}, inputLogprobs: {} } } }],
  ['complete with every read field, stop id', { response: { case: 'complete', value: { ...completeFields, outputLogprobs: outLp, inputLogprobs: inLp, matchedStop: { case: 'matchedTokenId', value: 151645 } } } }],
  ['complete, stop id 0', { response: { case: 'complete', value: { ...completeFields, matchedStop: { case: 'matchedTokenId', value: 0 } } } }],
  ['complete, stop string (non-ASCII)', { response: { case: 'complete', value: { ...completeFields, finishReason: 'length', matchedStop: { case: 'matchedStopStr', value: 'Ende — 終わり' } } } }],
  ['complete, empty stop string', { response: { case: 'complete', value: { ...completeFields, matchedStop: { case: 'matchedStopStr', value: '' } } } }],
  ['many ids', { response: { case: 'complete', value: { outputIds: Array.from(ids(5000, 3)) } } }],
];

const responseProtocols = [
  { name: 'SGLang', schema: sgl.GenerateResponseSchema as any, layout: SGLANG_RESPONSE, cases: [] as Array<[string, Record<string, unknown>]>,
    // Fields Portico never reads, which the reader must skip.
    extra: { chunk: { hiddenStates: [0.5, 1.5], reasoningTokens: 3 }, complete: { allHiddenStates: [{ values: [1, 2] }], reasoningTokens: 2, specAcceptedTokens: 5, specDraftTokens: 6 }, top: { requestId: 'r-1' } } },
  { name: 'vLLM', schema: vllm.GenerateResponseSchema as any, layout: VLLM_RESPONSE,
    cases: [
      ['complete with kv transfer params (JSON and legacy)', { response: { case: 'complete', value: { ...completeFields, finishReason: 'length', kvTransferParamsJson: NIXL_PARAMS, kvTransferParams: { remoteHost: '10.0.0.9', remotePort: 5600 } } } }],
      ['complete with kv transfer params, empty JSON string', { response: { case: 'complete', value: { ...completeFields, kvTransferParamsJson: '' } } }],
      ['complete with only the legacy kv transfer params', { response: { case: 'complete', value: { ...completeFields, kvTransferParams: { remoteHost: 'höst', remotePort: 65535 } } } }],
      ['complete with an empty legacy kv transfer params', { response: { case: 'complete', value: { ...completeFields, kvTransferParams: {} } } }],
    ] as Array<[string, Record<string, unknown>]>,
    extra: { chunk: {}, complete: { specAcceptedTokens: 5, specDraftTokens: 6 }, top: {} } },
];

for (const proto of responseProtocols) {
  describe(`${proto.name} GenerateResponse reader`, () => {
    for (const [name, init] of [...responseCases, ...proto.cases]) {
      for (const withExtra of [false, true]) {
        test(`same fields as fromBinary: ${name}${withExtra ? ', with unread fields' : ''}`, () => {
          let msgInit: any = init;
          if (withExtra) {
            const r = (init as any).response;
            msgInit = { ...proto.extra.top, ...init };
            if (r?.case === 'chunk') msgInit.response = { case: 'chunk', value: { ...r.value, ...proto.extra.chunk } };
            if (r?.case === 'complete') msgInit.response = { case: 'complete', value: { ...r.value, ...proto.extra.complete } };
          }
          const bytes = toBinary(proto.schema, create(proto.schema, msgInit));
          assert.deepEqual(decodeGenerateResponse(bytes, proto.layout), project(fromBinary(proto.schema, bytes) as unknown as AnyResponse));
        });
      }
    }

    test('unpacked repeated fields read like packed ones', () => {
      const chunkField = proto.layout.chunk;
      // chunk { token_ids: 5 (unpacked), token_ids: 300 (unpacked), output_logprobs { token_logprobs: -1.5 (unpacked) } }
      const lpBody = Buffer.concat([Buffer.from([0x0d]), Buffer.from(new Float32Array([-1.5]).buffer)]);
      const body = Buffer.concat([Buffer.from([0x08, 5, 0x08, 0xac, 0x02, 0x2a, lpBody.length]), lpBody]);
      const bytes = Buffer.concat([Buffer.from([(chunkField << 3) | 2, body.length]), body]);
      const got = decodeGenerateResponse(bytes, proto.layout);
      assert.deepEqual(got, project(fromBinary(proto.schema, bytes) as unknown as AnyResponse));
      assert.deepEqual((got.response.value as WireChunk).tokenIds, [5, 300]);
    });

    test('truncated and malformed messages throw in both', () => {
      const full = toBinary(proto.schema, create(proto.schema, { response: { case: 'complete', value: { ...completeFields, matchedStop: { case: 'matchedStopStr', value: 'stop here' } } } } as any));
      for (const cut of [1, 5, full.length - 1]) {
        const bytes = full.subarray(0, cut);
        assert.throws(() => fromBinary(proto.schema, bytes));
        assert.throws(() => decodeGenerateResponse(bytes, proto.layout));
      }
      // finish_reason with invalid UTF-8
      const bad = Buffer.from([(proto.layout.complete << 3) | 2, 4, 0x12, 2, 0xc3, 0x28]);
      assert.throws(() => fromBinary(proto.schema, bad));
      assert.throws(() => decodeGenerateResponse(bad, proto.layout));
    });
  });
}

describe('GenerateDone.kvTransferParams (vLLM GenerateComplete 12, legacy 9)', () => {
  const read = (value: Record<string, unknown>) => {
    const bytes = toBinary(vllm.GenerateResponseSchema, create(vllm.GenerateResponseSchema, { response: { case: 'complete', value: { ...completeFields, ...value } } } as any));
    const r = decodeGenerateResponse(bytes, VLLM_RESPONSE).response;
    assert.equal(r.case, 'complete');
    return toDone(r.value as WireComplete, false).kvTransferParams;
  };

  test('the JSON field is handed on as sent', () => {
    assert.equal(read({ kvTransferParamsJson: NIXL_PARAMS }), NIXL_PARAMS);
    assert.equal(read({ kvTransferParamsJson: '' }), '');
  });

  test('the JSON field wins over the legacy one', () => {
    assert.equal(read({ kvTransferParamsJson: NIXL_PARAMS, kvTransferParams: { remoteHost: 'other', remotePort: 1 } }), NIXL_PARAMS);
  });

  test('only the legacy field: {"remote_host","remote_port"}', () => {
    assert.deepEqual(JSON.parse(read({ kvTransferParams: { remoteHost: '10.0.0.9', remotePort: 5600 } })!), { remote_host: '10.0.0.9', remote_port: 5600 });
  });

  test('neither: absent', () => {
    assert.equal(read({}), undefined);
    const sglBytes = toBinary(sgl.GenerateResponseSchema, create(sgl.GenerateResponseSchema, { response: { case: 'complete', value: completeFields } } as any));
    const r = decodeGenerateResponse(sglBytes, SGLANG_RESPONSE).response;
    assert.equal(toDone(r.value as WireComplete, false).kvTransferParams, undefined);
    assert.equal('kvTransferParams' in toDone(r.value as WireComplete, false), false);
  });
});
