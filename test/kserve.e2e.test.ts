// The KServe v2 gRPC endpoint seen by a Connect gRPC client: a real `portico serve`
// (--grpc-port 0) in front of in-process mock engines reached over real gRPC. The echo
// engine (vLLM protocol) streams the prompt back, so texts and ids are known; its record
// of received GenerateRequests proves where each sampling setting arrived. A sim engine
// behind a second server generates long enough for cancellation to be seen on it.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Code, ConnectError } from '@connectrpc/connect';
import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { QWEN3 } from './helpers/portico.js';
import { eventually } from './helpers/eventually.js';
import { bool, finalFlag, fp32, inferRequest, int32, int64, outputIds, outputText, param, rawBytes, RequestStream, startKserve, text, uint32, type KserveServer } from './helpers/kserve.js';
import type { ModelInferRequest, ModelStreamInferResponse } from '../src/gen/kserve/grpc_service_pb.js';

const MODEL = 'm';
const PROMPT = 'Hello there, how are you today?';
const native = Model.load(QWEN3);
const promptIds = Array.from(native.encode(PROMPT, true));
const decode = (ids: number[]) => native.decode(Uint32Array.from(ids), true);

let echo: MockEngine;
let sim: MockEngine;
let s: KserveServer;
let slow: KserveServer;

before(async () => {
  const info = native.info();
  echo = await startMockEngine({ port: 0, mode: 'echo', protocol: 'vllm', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: MODEL });
  sim = await startMockEngine({ port: 0, mode: 'sim', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: MODEL });
  s = await startKserve(['--model-path', QWEN3, '--model-name', MODEL, '--worker', echo.url]);
  slow = await startKserve(['--model-path', QWEN3, '--model-name', MODEL, '--worker', sim.url]);
});

after(async () => {
  await s?.proc.stop();
  await slow?.proc.stop();
  await echo?.close();
  await sim?.close();
});

/** The GenerateRequest (proto JSON) the echo engine received last. */
function lastReceived(): Record<string, any> {
  const r = echo.context.received.all()[0];
  assert.ok(r, 'the engine received a request');
  return r.json();
}

async function rejects(p: Promise<unknown>, code: Code, message: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof ConnectError, String(err));
    assert.equal(err.code, code, `${Code[err.code]}: ${err.rawMessage}`);
    assert.match(err.rawMessage, message);
    return true;
  });
}

/** A plain request that must succeed (run after every refused one: the server still serves). */
async function stillServes(): Promise<void> {
  const res = await s.client.modelInfer(inferRequest(MODEL, [text('text_input', PROMPT), int32('max_tokens', 3)]));
  assert.equal(outputText(res, 'text_output'), decode(promptIds.slice(0, 3)));
}

test('health and server metadata', async () => {
  assert.deepEqual((await s.client.serverLive({})).live, true);
  assert.equal((await s.client.serverReady({})).ready, true);
  assert.equal((await s.client.modelReady({ name: MODEL })).ready, true);
  assert.equal((await s.client.modelReady({ name: MODEL, version: '1' })).ready, true);
  assert.equal((await s.client.modelReady({ name: 'nope' })).ready, false);
  assert.equal((await s.client.modelReady({ name: MODEL, version: '7' })).ready, false);
  const meta = await s.client.serverMetadata({});
  assert.equal(meta.name, 'portico');
  assert.match(meta.version, /^\d+\.\d+\.\d+/);
});

test('ModelMetadata and ModelConfig describe every input and output accepted', async () => {
  const meta = await s.client.modelMetadata({ name: MODEL });
  assert.equal(meta.name, MODEL);
  assert.deepEqual(meta.versions, ['1']);
  const inputs = Object.fromEntries(meta.inputs.map((t) => [t.name, `${t.datatype}${JSON.stringify(t.shape.map(Number))}`]));
  assert.deepEqual(inputs, {
    text_input: 'BYTES[1]',
    input_ids: 'INT32[-1]',
    stream: 'BOOL[1]',
    streaming: 'BOOL[1]',
    sampling_parameters: 'BYTES[1]',
    max_tokens: 'INT32[1]',
    temperature: 'FP32[1]',
    top_p: 'FP32[1]',
    top_k: 'INT32[1]',
    seed: 'INT64[1]',
    stop: 'BYTES[-1]',
    ignore_eos: 'BOOL[1]',
  });
  assert.deepEqual(meta.outputs.map((t) => `${t.name}:${t.datatype}`), ['text_output:BYTES', 'finish_reason:BYTES', 'output_ids:INT32']);
  const { config } = await s.client.modelConfig({ name: MODEL });
  assert.ok(config);
  assert.equal(config.name, MODEL);
  assert.equal(config.maxBatchSize, 0);
  assert.equal(config.modelTransactionPolicy?.decoupled, true);
  assert.deepEqual(config.input.map((i) => i.name), meta.inputs.map((i) => i.name));
  assert.ok(config.input.every((i) => i.optional));
  assert.deepEqual(config.output.map((o) => o.name), meta.outputs.map((o) => o.name));
  assert.equal(config.parameters.input_ids_datatypes?.stringValue, 'INT32,UINT32,INT64');
});

test('unknown model or version: NOT_FOUND on metadata, config and infer', async () => {
  await rejects(s.client.modelMetadata({ name: 'nope' }), Code.NotFound, /nope/);
  await rejects(s.client.modelConfig({ name: 'nope' }), Code.NotFound, /nope/);
  await rejects(s.client.modelMetadata({ name: MODEL, version: '2' }), Code.NotFound, /version "2"/);
  await rejects(s.client.modelInfer(inferRequest('nope', [text('text_input', PROMPT)])), Code.NotFound, /`nope` does not exist/);
  await rejects(s.client.modelInfer(inferRequest(MODEL, [text('text_input', PROMPT)], { modelVersion: '3' })), Code.NotFound, /version "3"/);
  await stillServes();
});

test('unary text in, text out: text_output, finish_reason, the id echoed, usage parameters', async () => {
  const res = await s.client.modelInfer(inferRequest(MODEL, [text('text_input', PROMPT), int32('max_tokens', 4)], { id: 'req-1' }));
  assert.equal(res.id, 'req-1');
  assert.equal(res.modelName, MODEL);
  assert.deepEqual(res.outputs.map((o) => `${o.name}:${o.datatype}:${o.shape.join(',')}`), ['text_output:BYTES:1', 'finish_reason:BYTES:1']);
  assert.equal(outputText(res, 'text_output'), decode(promptIds.slice(0, 4)));
  assert.equal(outputText(res, 'finish_reason'), 'length');
  assert.equal(res.parameters.prompt_tokens?.parameterChoice.value, BigInt(promptIds.length));
  assert.equal(res.parameters.completion_tokens?.parameterChoice.value, 4n);
  assert.equal(res.parameters.triton_final_response, undefined, 'ModelInfer responses are not decoupled');
  // The whole prompt echoed, ended by the engine: finish_reason stop. Default max_tokens is 16.
  const all = await s.client.modelInfer(inferRequest(MODEL, [text('text_input', 'Hi'), int32('max_tokens', 100)]));
  assert.equal(outputText(all, 'text_output'), 'Hi');
  assert.equal(outputText(all, 'finish_reason'), 'stop');
  await s.client.modelInfer(inferRequest(MODEL, [text('text_input', PROMPT)]));
  assert.equal(lastReceived().sampling_params.max_tokens, 16);
});

test('text_input in raw_input_contents (4-byte length prefix), shape [1, 1]', async () => {
  const req = inferRequest(MODEL, [{ name: 'text_input', datatype: 'BYTES', shape: [1n, 1n] }, { name: 'max_tokens', datatype: 'INT32', shape: [1n] }], {
    rawInputContents: [rawBytes(PROMPT), Buffer.from(Int32Array.of(5).buffer)],
  });
  const res = await s.client.modelInfer(req);
  assert.equal(outputText(res, 'text_output'), decode(promptIds.slice(0, 5)));
});

test('tokens in, tokens out: input_ids as INT32, UINT32 and INT64 (contents and raw), output_ids back', async () => {
  const ids = promptIds.slice(0, 6);
  for (const t of [int32('input_ids', ...ids), uint32('input_ids', ...ids), int64('input_ids', ...ids)]) {
    const res = await s.client.modelInfer(inferRequest(MODEL, [t, int32('max_tokens', 50)]));
    assert.deepEqual(res.outputs.map((o) => o.name), ['output_ids', 'finish_reason'], t.datatype);
    assert.deepEqual(outputIds(res), ids, t.datatype);
    assert.equal(res.outputs[0].shape[0], BigInt(ids.length));
    assert.deepEqual(lastReceived().token_ids ?? lastReceived().tokenized?.input_ids, ids);
  }
  const raw = await s.client.modelInfer(inferRequest(MODEL, [{ name: 'input_ids', datatype: 'INT64', shape: [1n, BigInt(ids.length)] }], { rawInputContents: [Buffer.from(BigInt64Array.from(ids.map(BigInt)).buffer)] }));
  assert.deepEqual(outputIds(raw), ids);
  // Both outputs on request, in the order asked.
  const both = await s.client.modelInfer(inferRequest(MODEL, [int32('input_ids', ...ids)], { outputs: ['text_output', 'output_ids'] }));
  assert.deepEqual(both.outputs.map((o) => o.name), ['text_output', 'output_ids']);
  assert.equal(outputText(both, 'text_output'), decode(ids));
  assert.deepEqual(outputIds(both), ids);
});

test('sampling tensors reach the engine', async () => {
  await s.client.modelInfer(
    inferRequest(MODEL, [text('text_input', PROMPT), int32('max_tokens', 3), fp32('temperature', 0.5), fp32('top_p', 0.75), int32('top_k', 7), int64('seed', 42), bool('ignore_eos', true)]),
  );
  const sp = lastReceived().sampling_params;
  assert.equal(sp.max_tokens, 3);
  assert.equal(sp.temperature, 0.5);
  assert.equal(sp.top_p, 0.75);
  assert.equal(sp.top_k, 7);
  assert.equal(Number(sp.seed), 42);
  assert.equal(sp.ignore_eos, true);
});

test('sampling_parameters JSON (numbers or strings, as the vLLM backend takes them) and request parameters', async () => {
  await s.client.modelInfer(inferRequest(MODEL, [text('text_input', PROMPT), text('sampling_parameters', JSON.stringify({ temperature: '0.25', top_p: 0.5, max_tokens: '2', ignore_eos: 'true' }))]));
  let sp = lastReceived().sampling_params;
  assert.deepEqual([sp.temperature, sp.top_p, sp.max_tokens, sp.ignore_eos], [0.25, 0.5, 2, true]);
  await s.client.modelInfer(inferRequest(MODEL, [text('text_input', PROMPT)], { parameters: { temperature: param.double(0.75), max_tokens: param.int(2), top_k: param.int(5), ignore_eos: param.bool(true), priority: param.int(1) } }));
  sp = lastReceived().sampling_params;
  assert.deepEqual([sp.temperature, sp.max_tokens, sp.top_k, sp.ignore_eos], [0.75, 2, 5, true]);
  // Precedence: tensor over sampling_parameters over request parameters.
  await s.client.modelInfer(
    inferRequest(MODEL, [text('text_input', PROMPT), text('sampling_parameters', '{"temperature": 0.5, "top_k": 3}'), fp32('temperature', 0.25)], { parameters: { temperature: param.double(1), top_k: param.int(9), top_p: param.double(0.5) } }),
  );
  sp = lastReceived().sampling_params;
  assert.deepEqual([sp.temperature, sp.top_k, sp.top_p], [0.25, 3, 0.5]);
});

test('stop strings end the text where they match', async () => {
  const res = await s.client.modelInfer(inferRequest(MODEL, [text('text_input', PROMPT), int32('max_tokens', 50), text('stop', 'how')]));
  assert.equal(outputText(res, 'text_output'), 'Hello there, ');
  assert.equal(outputText(res, 'finish_reason'), 'stop');
});

async function collect(responses: AsyncIterable<ModelStreamInferResponse>): Promise<ModelStreamInferResponse[]> {
  const out: ModelStreamInferResponse[] = [];
  for await (const r of responses) out.push(r);
  return out;
}

test('ModelStreamInfer: several requests on one stream, each response with its id, the last of each flagged final', async () => {
  const input = new RequestStream();
  const got = collect(s.client.modelStreamInfer(input));
  input.push(inferRequest(MODEL, [text('text_input', PROMPT), int32('max_tokens', 6), bool('stream', true)], { id: 'a' }));
  input.push(inferRequest(MODEL, [text('text_input', PROMPT), int32('max_tokens', 5)], { id: 'b' }));
  input.push(inferRequest(MODEL, [int32('input_ids', ...promptIds.slice(0, 4)), bool('streaming', true)], { id: 'c', outputs: ['output_ids', 'text_output', 'finish_reason'] }));
  input.end();
  const responses = await got;
  assert.ok(responses.every((r) => r.errorMessage === ''), responses.map((r) => r.errorMessage).join('; '));
  const byId = (id: string) => responses.map((r) => r.inferResponse!).filter((r) => r.id === id);
  const a = byId('a');
  assert.ok(a.length > 2, `request a streamed (${a.length} responses)`);
  assert.deepEqual(a.map(finalFlag), [...a.slice(1).map(() => false), true]);
  assert.equal(a.map((r) => outputText(r, 'text_output')).join(''), decode(promptIds.slice(0, 6)));
  assert.deepEqual(a.map((r) => outputText(r, 'finish_reason')), [...a.slice(1).map(() => undefined), 'length']);
  // stream false on ModelStreamInfer: one response, final.
  const b = byId('b');
  assert.equal(b.length, 1);
  assert.equal(finalFlag(b[0]), true);
  assert.equal(outputText(b[0], 'text_output'), decode(promptIds.slice(0, 5)));
  // Streamed ids add up to the prompt (echo), with the text they made.
  const c = byId('c');
  assert.ok(c.length > 1);
  assert.deepEqual(c.flatMap((r) => outputIds(r)!), promptIds.slice(0, 4));
  assert.equal(c.map((r) => outputText(r, 'text_output')).join(''), decode(promptIds.slice(0, 4)));
  assert.equal(finalFlag(c.at(-1)!), true);
  assert.equal(outputText(c.at(-1)!, 'finish_reason'), 'stop');
});

test('ModelStreamInfer: a bad request gets error_message and the stream goes on', async () => {
  const input = new RequestStream();
  const got = collect(s.client.modelStreamInfer(input));
  input.push(inferRequest(MODEL, [text('text_input', PROMPT), text('bogus', 'x')], { id: 'bad' }));
  input.push(inferRequest('nope', [text('text_input', PROMPT)], { id: 'bad-model' }));
  input.push(inferRequest(MODEL, [text('text_input', PROMPT), int32('max_tokens', 2)], { id: 'good' }));
  input.end();
  const responses = await got;
  const bad = responses.find((r) => r.inferResponse?.id === 'bad')!;
  assert.match(bad.errorMessage, /`bogus`/);
  assert.equal(finalFlag(bad.inferResponse!), true);
  assert.match(responses.find((r) => r.inferResponse?.id === 'bad-model')!.errorMessage, /`nope` does not exist/);
  const good = responses.find((r) => r.inferResponse?.id === 'good')!;
  assert.equal(good.errorMessage, '');
  assert.equal(outputText(good.inferResponse!, 'text_output'), decode(promptIds.slice(0, 2)));
});

const BAD: Array<{ what: string; req: () => ModelInferRequest; message: RegExp }> = [
  { what: 'unknown input', req: () => inferRequest(MODEL, [text('text_input', PROMPT), text('prompt', 'x')]), message: /input tensor `prompt`: unknown input/ },
  { what: 'wrong datatype', req: () => inferRequest(MODEL, [text('text_input', PROMPT), fp32('max_tokens', 3)]), message: /input tensor `max_tokens`: datatype must be INT32, got "FP32"/ },
  { what: 'wrong datatype of input_ids', req: () => inferRequest(MODEL, [fp32('input_ids', 3)]), message: /input tensor `input_ids`: datatype must be INT32 or UINT32 or INT64/ },
  { what: 'wrong shape', req: () => inferRequest(MODEL, [text('text_input', PROMPT, PROMPT)]), message: /input tensor `text_input`: shape must be \[1\] or \[1, 1\], got \[2\]/ },
  { what: 'shape not matching the data', req: () => inferRequest(MODEL, [{ ...int32('input_ids', 1, 2, 3), shape: [2n] }]), message: /input tensor `input_ids`: shape \[2\] holds 2 element\(s\), the data has 3/ },
  { what: 'an input given twice', req: () => inferRequest(MODEL, [text('text_input', PROMPT), text('text_input', PROMPT)]), message: /`text_input`: given twice/ },
  { what: 'both prompts', req: () => inferRequest(MODEL, [text('text_input', PROMPT), int32('input_ids', 1)]), message: /text_input or input_ids, not both/ },
  { what: 'no prompt', req: () => inferRequest(MODEL, [int32('max_tokens', 3)]), message: /needs an input tensor `text_input`/ },
  { what: 'raw_input_contents count', req: () => inferRequest(MODEL, [{ name: 'text_input', datatype: 'BYTES', shape: [1n] }, { name: 'max_tokens', datatype: 'INT32', shape: [1n] }], { rawInputContents: [rawBytes(PROMPT)] }), message: /raw_input_contents has 1 entries for 2 inputs/ },
  { what: 'truncated raw BYTES', req: () => inferRequest(MODEL, [{ name: 'text_input', datatype: 'BYTES', shape: [1n] }], { rawInputContents: [rawBytes(PROMPT).subarray(0, 10)] }), message: /`text_input`: raw BYTES element of \d+ bytes runs past the end/ },
  { what: 'raw INT32 not whole', req: () => inferRequest(MODEL, [{ name: 'input_ids', datatype: 'INT32', shape: [1n] }], { rawInputContents: [Buffer.from([1, 2, 3])] }), message: /`input_ids`: raw contents of 3 bytes are not a whole number of INT32 elements/ },
  { what: 'invalid UTF-8', req: () => inferRequest(MODEL, [{ name: 'text_input', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [Buffer.from([0xff, 0xfe])] } as never }]), message: /`text_input`: is not valid UTF-8/ },
  { what: 'token id out of the vocabulary', req: () => inferRequest(MODEL, [int32('input_ids', 1, 10_000_000)]), message: /token id 10000000 is out of the vocabulary/ },
  { what: 'negative token id', req: () => inferRequest(MODEL, [int32('input_ids', -1)]), message: /token id -1 is not a non-negative/ },
  { what: 'max_tokens 0', req: () => inferRequest(MODEL, [text('text_input', PROMPT), int32('max_tokens', 0)]), message: /`max_tokens` must be greater than 0/ },
  { what: 'max_tokens past the context', req: () => inferRequest(MODEL, [text('text_input', PROMPT), int32('max_tokens', 1_000_000)]), message: /maximum context length is \d+ tokens/ },
  // ' word' is one Qwen3 token: 33000 of them pass the engine's 32768-token context (GetModelInfo).
  { what: 'text_input past the context', req: () => inferRequest(MODEL, [text('text_input', ' word'.repeat(33_000)), int32('max_tokens', 1)]), message: /This model's maximum context length is 32768 tokens\. However, your \w+ resulted in 33000 tokens\./ },
  { what: 'temperature out of range', req: () => inferRequest(MODEL, [text('text_input', PROMPT), fp32('temperature', 5)]), message: /`temperature` must be at least 0 and at most 2/ },
  { what: 'sampling_parameters not JSON', req: () => inferRequest(MODEL, [text('text_input', PROMPT), text('sampling_parameters', '{nope')]), message: /`sampling_parameters`: is not valid JSON/ },
  { what: 'sampling_parameters unknown key', req: () => inferRequest(MODEL, [text('text_input', PROMPT), text('sampling_parameters', '{"best_of": 2}')]), message: /`sampling_parameters`: unknown key `best_of`/ },
  { what: 'sampling_parameters string not a number', req: () => inferRequest(MODEL, [text('text_input', PROMPT), text('sampling_parameters', '{"temperature": "warm"}')]), message: /sampling_parameters `temperature` must be a number/ },
  { what: 'unknown request parameter', req: () => inferRequest(MODEL, [text('text_input', PROMPT)], { parameters: { frobnicate: param.int(1) } }), message: /unknown request parameter `frobnicate`/ },
  { what: 'unknown output', req: () => inferRequest(MODEL, [text('text_input', PROMPT)], { outputs: ['logits'] }), message: /unknown output `logits`/ },
  { what: 'stream on ModelInfer', req: () => inferRequest(MODEL, [text('text_input', PROMPT), bool('stream', true)]), message: /need ModelStreamInfer/ },
];

for (const b of BAD) {
  test(`INVALID_ARGUMENT: ${b.what}, then the server still serves`, async () => {
    await rejects(s.client.modelInfer(b.req()), Code.InvalidArgument, b.message);
    await stillServes();
  });
}

test('requests are counted in the frontend metrics with the rpc as the endpoint label', async () => {
  const body = await (await fetch(`${s.proc.url}/metrics`)).text();
  const count = (endpoint: string, type: string, status: string) => {
    const [outcome, errorType] = status === '200' ? ['success', ''] : ['error', status === '400' ? 'validation' : status];
    const m = new RegExp(`portico_frontend_requests_total\\{model="${MODEL}",endpoint="${endpoint}",request_type="${type}",status="${outcome}",error_type="${errorType}"\\} (\\d+)`).exec(body);
    return m ? Number(m[1]) : 0;
  };
  assert.ok(count('/inference.GRPCInferenceService/ModelInfer', 'unary', '200') > 5, body.split('\n').filter((l) => l.includes('GRPC')).join('\n'));
  assert.ok(count('/inference.GRPCInferenceService/ModelInfer', 'unary', '400') > 5);
  assert.ok(count('/inference.GRPCInferenceService/ModelStreamInfer', 'stream', '200') >= 2);
  assert.match(body, /portico_frontend_inflight_requests\{model="m"\} 0/);
});

test('a request the engine ends itself is not aborted on the engine (no Abort rpc, no reset)', async () => {
  const before = { ...echo.stats };
  for (let i = 0; i < 10; i++) await s.client.modelInfer(inferRequest(MODEL, [text('text_input', PROMPT), int32('max_tokens', 2)]));
  const input = new RequestStream();
  for (let i = 0; i < 5; i++) input.push(inferRequest(MODEL, [text('text_input', PROMPT), int32('max_tokens', 2), bool('stream', true)], { id: `e${i}` }));
  input.end();
  for await (const _ of s.client.modelStreamInfer(input));
  await eventually(() => echo.stats.active === 0, 'every engine stream ended');
  assert.equal(echo.stats.generates - before.generates, 15);
  assert.equal(echo.stats.abortRpcs - before.abortRpcs, 0, 'no Abort rpc');
  assert.equal(echo.stats.aborts - before.aborts, 0, 'no engine request aborted');
});

const LONG = (more: Parameters<typeof bool>[] = [], id = '') => inferRequest(MODEL, [text('text_input', 'tell me a long story'), int32('max_tokens', 30_000), bool('ignore_eos', true), ...more.map((a) => bool(...a))], { id });

test('a cancelled ModelInfer aborts its engine request', async () => {
  const ac = new AbortController();
  const call = slow.client.modelInfer(LONG(), { signal: ac.signal });
  await eventually(() => sim.stats.active === 1, 'the engine runs the request');
  ac.abort();
  await rejects(call, Code.Canceled, /./);
  // 30,000 tokens take far longer than the hang guard: only the abort ends the stream.
  await eventually(() => sim.stats.active === 0, 'the engine request was aborted');
});

test('closing a ModelStreamInfer stream aborts every engine request on it', async () => {
  const ac = new AbortController();
  const input = new RequestStream();
  const responses = slow.client.modelStreamInfer(input, { signal: ac.signal })[Symbol.asyncIterator]();
  const long = (id: string) => LONG([['stream', true]], id);
  input.push(long('x'));
  input.push(long('y'));
  const first = await responses.next();
  assert.equal(first.done, false);
  await eventually(() => sim.stats.active === 2, 'the engine runs both requests');
  ac.abort();
  await assert.rejects(responses.next());
  await eventually(() => sim.stats.active === 0, 'both engine requests were aborted');
});
