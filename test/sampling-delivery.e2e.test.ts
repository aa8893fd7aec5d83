// Delivery of every sampling option to the engine, on both engine protocols. Two mock
// engines run in this process (SGLang scheduler protocol and vLLM engine protocol); a
// real `portico serve` is pointed at each with --worker; the real `openai` client sends
// a request with one field set, and the mock's record of the GenerateRequest it received
// (protobuf JSON, proto field names) must hold the value at the proto field the engine
// reads. Logprob values in responses are the mock's deterministic ones (from token ids).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { mockLogprob } from '../src/mock/logprobs.js';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';

const MODEL = 'm';
type Protocol = 'sglang' | 'vllm';
const PROTOCOLS: Protocol[] = ['sglang', 'vllm'];

const engines = new Map<Protocol, MockEngine>();
const servers = new Map<Protocol, Proc>();
const clients = new Map<Protocol, OpenAI>();

before(async () => {
  const info = Model.load(QWEN3).info();
  for (const protocol of PROTOCOLS) {
    const engine = await startMockEngine({ port: 0, mode: 'echo', protocol, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: MODEL });
    engines.set(protocol, engine);
    const server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--worker', engine.url]);
    servers.set(protocol, server);
    clients.set(protocol, new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 }));
  }
});

after(async () => {
  for (const s of servers.values()) await s.stop();
  for (const e of engines.values()) await e.close();
});

let seq = 0;
const nextId = (tag: string) => `delivery-${tag}-${++seq}`;

/** The GenerateRequest (proto JSON) the engine got for request id `id`. */
function received(protocol: Protocol, id: string): Record<string, any> {
  const r = engines.get(protocol)!.context.received.find(id);
  assert.ok(r, `the ${protocol} engine received request ${id}`);
  assert.equal(r.protocol, protocol);
  return r.json();
}

type Endpoint = 'chat' | 'completions';

async function send(protocol: Protocol, endpoint: Endpoint, fields: Record<string, unknown>, id: string): Promise<unknown> {
  const client = clients.get(protocol)!;
  const opts = { headers: { 'x-request-id': id } };
  if (endpoint === 'chat') {
    return client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4, ...fields } as OpenAI.ChatCompletionCreateParamsNonStreaming, opts);
  }
  return client.completions.create({ model: MODEL, prompt: 'Hello there', max_tokens: 4, ...fields } as OpenAI.CompletionCreateParamsNonStreaming, opts);
}

const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

interface Row {
  field: string;
  endpoint?: Endpoint;
  body: Record<string, unknown>;
  /** Expected values at dotted proto-JSON paths of GenerateRequest; undefined = absent. */
  sglang: Record<string, unknown>;
  vllm: Record<string, unknown>;
}

// Values are exact in float32 so that the proto round trip keeps them.
const ROWS: Row[] = [
  { field: 'temperature', body: { temperature: 0.5 }, sglang: { 'sampling_params.temperature': 0.5 }, vllm: { 'sampling_params.temperature': 0.5 } },
  { field: 'top_p', body: { top_p: 0.75 }, sglang: { 'sampling_params.top_p': 0.75 }, vllm: { 'sampling_params.top_p': 0.75 } },
  { field: 'top_k', body: { top_k: 7 }, sglang: { 'sampling_params.top_k': 7 }, vllm: { 'sampling_params.top_k': 7 } },
  { field: 'top_k -1 (off)', body: { top_k: -1 }, sglang: { 'sampling_params.top_k': -1 }, vllm: { 'sampling_params.top_k': undefined } },
  { field: 'min_p', body: { min_p: 0.25 }, sglang: { 'sampling_params.min_p': 0.25 }, vllm: { 'sampling_params.min_p': 0.25 } },
  { field: 'frequency_penalty', body: { frequency_penalty: 0.5 }, sglang: { 'sampling_params.frequency_penalty': 0.5 }, vllm: { 'sampling_params.frequency_penalty': 0.5 } },
  { field: 'presence_penalty', body: { presence_penalty: -0.5 }, sglang: { 'sampling_params.presence_penalty': -0.5 }, vllm: { 'sampling_params.presence_penalty': -0.5 } },
  { field: 'repetition_penalty', body: { repetition_penalty: 1.25 }, sglang: { 'sampling_params.repetition_penalty': 1.25 }, vllm: { 'sampling_params.repetition_penalty': 1.25 } },
  // The SGLang scheduler protocol has no seed field: it travels in custom_params, as a decimal string.
  { field: 'seed', body: { seed: 42 }, sglang: { 'sampling_params.custom_params.seed': '42' }, vllm: { 'sampling_params.seed': 42 } },
  { field: 'max_tokens', body: { max_tokens: 3 }, sglang: { 'sampling_params.max_new_tokens': 3 }, vllm: { 'sampling_params.max_tokens': 3 } },
  { field: 'max_completion_tokens', body: { max_tokens: undefined, max_completion_tokens: 2 }, sglang: { 'sampling_params.max_new_tokens': 2 }, vllm: { 'sampling_params.max_tokens': 2 } },
  { field: 'min_tokens', body: { min_tokens: 2 }, sglang: { 'sampling_params.min_new_tokens': 2 }, vllm: { 'sampling_params.min_tokens': 2 } },
  { field: 'ignore_eos', body: { ignore_eos: true }, sglang: { 'sampling_params.ignore_eos': true }, vllm: { 'sampling_params.ignore_eos': true } },
  { field: 'stop_token_ids', body: { stop_token_ids: [11, 13] }, sglang: { 'sampling_params.stop_token_ids': [11, 13] }, vllm: { 'sampling_params.stop_token_ids': [11, 13] } },
  { field: 'stop (token ids)', body: { stop: [576] }, sglang: { 'sampling_params.stop_token_ids': [576] }, vllm: { 'sampling_params.stop_token_ids': [576] } },
  { field: 'n', body: { n: 2, temperature: 1 }, sglang: { 'sampling_params.n': 2 }, vllm: { 'sampling_params.n': 2 } },
  { field: 'logit_bias', body: { logit_bias: { '100': 5.5, '7': -100 } }, sglang: { 'sampling_params.logit_bias': { '100': 5.5, '7': -100 } }, vllm: { 'sampling_params.logit_bias': { '100': 5.5, '7': -100 } } },
  {
    field: 'response_format json_schema',
    body: { response_format: { type: 'json_schema', json_schema: { name: 'city', schema: SCHEMA, strict: true } } },
    sglang: { 'sampling_params.json_schema': JSON.stringify(SCHEMA) },
    vllm: { 'sampling_params.json_schema': JSON.stringify(SCHEMA) },
  },
  {
    field: 'response_format json_object',
    body: { response_format: { type: 'json_object' } },
    sglang: { 'sampling_params.json_schema': '{"type":"object"}' },
    vllm: { 'sampling_params.json_object': true },
  },
  {
    field: 'response_format text (no constraint)',
    body: { response_format: { type: 'text' } },
    sglang: { 'sampling_params.json_schema': undefined, 'sampling_params.regex': undefined },
    vllm: { 'sampling_params.json_schema': undefined, 'sampling_params.json_object': undefined },
  },
  {
    field: 'response_format structural_tag',
    body: { response_format: { type: 'structural_tag', structures: [{ begin: '<f>', schema: SCHEMA, end: '</f>' }], triggers: ['<f>'] } },
    sglang: { 'sampling_params.structural_tag': JSON.stringify({ type: 'structural_tag', structures: [{ begin: '<f>', schema: SCHEMA, end: '</f>' }], triggers: ['<f>'] }) },
    vllm: { 'sampling_params.structural_tag': JSON.stringify({ type: 'structural_tag', structures: [{ begin: '<f>', schema: SCHEMA, end: '</f>' }], triggers: ['<f>'] }) },
  },
  { field: 'guided_json (object)', body: { guided_json: SCHEMA }, sglang: { 'sampling_params.json_schema': JSON.stringify(SCHEMA) }, vllm: { 'sampling_params.json_schema': JSON.stringify(SCHEMA) } },
  { field: 'guided_json (string)', body: { guided_json: '{"type":"string"}' }, sglang: { 'sampling_params.json_schema': '{"type":"string"}' }, vllm: { 'sampling_params.json_schema': '{"type":"string"}' } },
  { field: 'guided_regex', body: { guided_regex: '[a-z]+@x\\.com' }, sglang: { 'sampling_params.regex': '[a-z]+@x\\.com' }, vllm: { 'sampling_params.regex': '[a-z]+@x\\.com' } },
  { field: 'guided_grammar', body: { guided_grammar: 'root ::= "yes" | "no"' }, sglang: { 'sampling_params.ebnf_grammar': 'root ::= "yes" | "no"' }, vllm: { 'sampling_params.grammar': 'root ::= "yes" | "no"' } },
  { field: 'guided_choice', body: { guided_choice: ['a.b', 'c(d)', 'plain'] }, sglang: { 'sampling_params.regex': '(a\\.b|c\\(d\\)|plain)' }, vllm: { 'sampling_params.regex': '(a\\.b|c\\(d\\)|plain)' } },
  { field: 'structured_outputs.json', body: { structured_outputs: { json: SCHEMA } }, sglang: { 'sampling_params.json_schema': JSON.stringify(SCHEMA) }, vllm: { 'sampling_params.json_schema': JSON.stringify(SCHEMA) } },
  { field: 'structured_outputs.regex', body: { structured_outputs: { regex: 'a+' } }, sglang: { 'sampling_params.regex': 'a+' }, vllm: { 'sampling_params.regex': 'a+' } },
  { field: 'structured_outputs.choice', body: { structured_outputs: { choice: ['x|y', 'z'], disable_any_whitespace: false } }, sglang: { 'sampling_params.regex': '(x\\|y|z)' }, vllm: { 'sampling_params.regex': '(x\\|y|z)' } },
  { field: 'structured_outputs.grammar', body: { structured_outputs: { grammar: 'root ::= "a"' } }, sglang: { 'sampling_params.ebnf_grammar': 'root ::= "a"' }, vllm: { 'sampling_params.grammar': 'root ::= "a"' } },
  { field: 'structured_outputs.json_object', body: { structured_outputs: { json_object: true } }, sglang: { 'sampling_params.json_schema': '{"type":"object"}' }, vllm: { 'sampling_params.json_object': true } },
  { field: 'structured_outputs.structural_tag', body: { structured_outputs: { structural_tag: '{"type":"structural_tag"}' } }, sglang: { 'sampling_params.structural_tag': '{"type":"structural_tag"}' }, vllm: { 'sampling_params.structural_tag': '{"type":"structural_tag"}' } },
  {
    field: 'logprobs + top_logprobs (chat)',
    body: { logprobs: true, top_logprobs: 3 },
    sglang: { return_logprob: true, top_logprobs_num: 3, logprob_start_len: -1 },
    // vLLM's servicer sends the sampled token first: one more, so the 3 best are among them.
    vllm: { 'sampling_params.logprobs': 4 },
  },
  { field: 'logprobs without alternatives (chat)', body: { logprobs: true }, sglang: { return_logprob: true, top_logprobs_num: undefined }, vllm: { 'sampling_params.logprobs': 0 } },
  { field: 'logprobs false (chat)', body: { logprobs: false }, sglang: { return_logprob: undefined }, vllm: { 'sampling_params.logprobs': undefined } },
  { field: 'logprobs (completions)', endpoint: 'completions', body: { logprobs: 2 }, sglang: { return_logprob: true, top_logprobs_num: 2 }, vllm: { 'sampling_params.logprobs': 3 } },
  { field: 'logprobs 0 (completions)', endpoint: 'completions', body: { logprobs: 0 }, sglang: { return_logprob: true, top_logprobs_num: undefined }, vllm: { 'sampling_params.logprobs': 0 } },
  {
    field: 'echo + logprobs asks for prompt logprobs (completions)',
    endpoint: 'completions',
    body: { logprobs: 2, echo: true },
    sglang: { return_logprob: true, top_logprobs_num: 2, logprob_start_len: undefined },
    vllm: { 'sampling_params.logprobs': 3, 'sampling_params.prompt_logprobs': 3 },
  },
  { field: 'logprobs without echo asks for no prompt logprobs (completions)', endpoint: 'completions', body: { logprobs: 2 }, sglang: { logprob_start_len: -1 }, vllm: { 'sampling_params.prompt_logprobs': undefined } },
  { field: 'logit_bias (completions)', endpoint: 'completions', body: { logit_bias: { '5': 1 } }, sglang: { 'sampling_params.logit_bias': { '5': 1 } }, vllm: { 'sampling_params.logit_bias': { '5': 1 } } },
  { field: 'guided_regex (completions)', endpoint: 'completions', body: { guided_regex: '\\d+' }, sglang: { 'sampling_params.regex': '\\d+' }, vllm: { 'sampling_params.regex': '\\d+' } },
  { field: 'temperature (completions)', endpoint: 'completions', body: { temperature: 1.5 }, sglang: { 'sampling_params.temperature': 1.5 }, vllm: { 'sampling_params.temperature': 1.5 } },
  {
    field: 'nvext.greed_sampling',
    body: { temperature: 1.5, top_k: 9, nvext: { greed_sampling: true } },
    sglang: { 'sampling_params.temperature': undefined, 'sampling_params.top_k': -1 },
    vllm: { 'sampling_params.temperature': 0, 'sampling_params.top_k': undefined },
  },
];

function at(obj: Record<string, any>, path: string): unknown {
  return path.split('.').reduce<any>((o, k) => (o == null ? undefined : o[k]), obj);
}

for (const protocol of PROTOCOLS) {
  for (const row of ROWS) {
    const endpoint = row.endpoint ?? 'chat';
    test(`${protocol}: ${row.field} reaches the engine (${endpoint})`, async () => {
      const id = nextId(protocol);
      await send(protocol, endpoint, row.body, id);
      const req = received(protocol, id);
      for (const [path, want] of Object.entries(row[protocol])) {
        assert.deepEqual(at(req, path), want, `${path} in ${JSON.stringify(req.sampling_params)}`);
      }
    });
  }

  test(`${protocol}: without options the engine gets no constraint, no bias and no logprobs`, async () => {
    const id = nextId(protocol);
    await send(protocol, 'chat', {}, id);
    const sp = received(protocol, id).sampling_params as Record<string, unknown>;
    for (const k of ['json_schema', 'regex', 'ebnf_grammar', 'grammar', 'structural_tag', 'json_object', 'logit_bias', 'logprobs']) {
      assert.equal(sp[k], undefined, k);
    }
  });
}

test('vllm: a seed past the engine\'s int32 is a 400 naming seed, never cut to 32 bits; the next request is served', async () => {
  const base = `${servers.get('vllm')!.url}/v1/chat/completions`;
  for (const seed of [2 ** 31, -(2 ** 31) - 1, 2 ** 40]) {
    const res = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2, seed }) });
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.match(body.error.message, /`seed` must be a 32-bit integer/);
    assert.doesNotMatch(body.error.message, /grpc:|127\.0\.0\.1/);
  }
  for (const seed of [2 ** 31 - 1, -(2 ** 31)]) {
    const id = nextId('vllm');
    await send('vllm', 'chat', { seed }, id);
    assert.equal(at(received('vllm', id), 'sampling_params.seed'), seed, 'the int32 edges reach the engine as they are');
  }
});

// ---- logprobs in responses (values are the mock's: derived from the token id) ----

const f32 = Math.fround;

test('chat logprobs, unary: one entry per completion token with token, logprob, bytes and top_logprobs', async () => {
  for (const protocol of PROTOCOLS) {
    const client = clients.get(protocol)!;
    const r = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 3, logprobs: true, top_logprobs: 2 });
    const content = r.choices[0].logprobs!.content!;
    assert.equal(content.length, r.usage!.completion_tokens);
    // Echo mode returns the prompt, which starts with <|im_start|> (id 151644).
    assert.equal(content[0].token, '<|im_start|>');
    assert.equal(content[0].logprob, f32(mockLogprob(151644)));
    assert.deepEqual(content[0].bytes, [...Buffer.from('<|im_start|>')]);
    assert.equal(content[0].top_logprobs.length, 2);
    assert.equal(content[0].top_logprobs[0].token, '<|im_start|>');
    assert.equal(content[0].top_logprobs[1].logprob, f32(mockLogprob(151644) - 0.5));
    assert.equal(content.map((c) => c.token).join(''), '<|im_start|>user\n');
  }
});

test('chat logprobs, streamed: each delta carries the logprobs of its own tokens; return_tokens_as_token_ids', async () => {
  for (const protocol of PROTOCOLS) {
    const client = clients.get(protocol)!;
    const stream = await client.chat.completions.create({
      model: MODEL, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 3, logprobs: true, stream: true, return_tokens_as_token_ids: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    const tokens: string[] = [];
    let text = '';
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (!c) continue;
      text += c.delta.content ?? '';
      for (const e of c.logprobs?.content ?? []) {
        tokens.push(e.token);
        assert.equal(e.logprob, f32(mockLogprob(Number(e.token.slice('token_id:'.length)))));
        assert.deepEqual(e.top_logprobs, []);
      }
    }
    assert.equal(text, 'user\n', 'special tokens are skipped in the text');
    assert.deepEqual(tokens, ['token_id:151644', 'token_id:872', 'token_id:198']);
  }
});

test('completions logprobs: tokens, token_logprobs, top_logprobs (sampled token included), text_offset after the echo', async () => {
  for (const protocol of PROTOCOLS) {
    const client = clients.get(protocol)!;
    const r = await client.completions.create({ model: MODEL, prompt: 'hello world', max_tokens: 5, logprobs: 1 });
    const lp = r.choices[0].logprobs!;
    assert.equal(r.choices[0].text, 'hello world');
    assert.deepEqual(lp.tokens, ['hello', ' world']);
    assert.deepEqual(lp.text_offset, [0, 5]);
    assert.equal(lp.token_logprobs![0], f32(mockLogprob(14990)));
    assert.deepEqual(Object.keys(lp.top_logprobs![0]), ['hello']);

    // echo: the echoed prompt's tokens come first (the first has no logprob), offsets run on.
    const e = await client.completions.create({ model: MODEL, prompt: 'hello world', max_tokens: 5, logprobs: 1, echo: true });
    const elp = e.choices[0].logprobs!;
    assert.equal(e.choices[0].text, 'hello worldhello world');
    assert.deepEqual(elp.tokens, ['hello', ' world', 'hello', ' world']);
    assert.deepEqual(elp.text_offset, [0, 5, 11, 16]);
    assert.deepEqual(elp.token_logprobs, [null, f32(mockLogprob(1879)), f32(mockLogprob(14990)), f32(mockLogprob(1879))]);
    assert.equal(elp.top_logprobs![0], null);
    assert.deepEqual(elp.top_logprobs![1], { ' world': f32(mockLogprob(1879)) });

    const es = await client.completions.create({ model: MODEL, prompt: 'hello world', max_tokens: 5, logprobs: 0, echo: true, stream: true });
    const echoed: string[] = [];
    for await (const chunk of es) echoed.push(...(chunk.choices[0]?.logprobs?.tokens ?? []));
    assert.deepEqual(echoed, ['hello', ' world', 'hello', ' world'], 'streamed: the prompt part comes with the first delta');

    const s = await client.completions.create({ model: MODEL, prompt: 'hello world', max_tokens: 5, logprobs: 0, stream: true });
    const streamed: string[] = [];
    const offsets: number[] = [];
    for await (const chunk of s) {
      const l = chunk.choices[0]?.logprobs;
      if (l) {
        streamed.push(...l.tokens!);
        offsets.push(...l.text_offset!);
      }
    }
    assert.deepEqual(streamed, ['hello', ' world']);
    assert.deepEqual(offsets, [0, 5]);
  }
});

test('detokenize false: no text, the tokens still come back through logprobs', async () => {
  const client = clients.get('sglang')!;
  const r = await client.completions.create({ model: MODEL, prompt: 'hello world', max_tokens: 5, logprobs: 0, detokenize: false, return_tokens_as_token_ids: true } as OpenAI.CompletionCreateParamsNonStreaming);
  assert.equal(r.choices[0].text, '');
  assert.deepEqual(r.choices[0].logprobs!.tokens, ['token_id:14990', 'token_id:1879']);
});

test('thinking {type: disabled} reaches the Qwen3 template as enable_thinking=false; enabled does not add the empty think block', async () => {
  const client = clients.get('sglang')!;
  const base = { model: MODEL, messages: [{ role: 'user', content: 'Hi' }], skip_special_tokens: false, ignore_eos: true };
  const off = await client.chat.completions.create({ ...base, thinking: { type: 'disabled' } } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(off.choices[0].message.content, '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
  const on = await client.chat.completions.create({ ...base, thinking: { type: 'enabled', budget_tokens: 2048 } } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(on.choices[0].message.content, '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
  // Spec 003: thinking values in the template kwargs are normalised ("off" is disabled).
  const kw = await client.chat.completions.create({ ...base, chat_template_kwargs: { enable_thinking: 'off' } } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(kw.choices[0].message.content, off.choices[0].message.content);
  // An explicit kwarg wins over `thinking`.
  const both = await client.chat.completions.create({ ...base, thinking: { type: 'disabled' }, chat_template_kwargs: { enable_thinking: true } } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(both.choices[0].message.content, on.choices[0].message.content);
});

// ---- the passthrough allowlist: null = omitted; type-checked even when ignoring ----

async function post(server: Proc, body: Record<string, unknown>): Promise<{ status: number; json: any }> {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2, ...body }),
  });
  return { status: res.status, json: await res.json() };
}

test('null means omitted for the new options; [] bad words is no constraint', async () => {
  const server = servers.get('vllm')!;
  for (const body of [{ allowed_token_ids: null }, { bad_words_token_ids: null }, { bad_words_token_ids: [] }, { logit_bias: null }, { response_format: null }, { guided_json: null }, { logprobs: null, top_logprobs: null }, { thinking: null, reasoning_effort: null }, { detokenize: null }]) {
    const r = await post(server, body);
    assert.equal(r.status, 200, `${JSON.stringify(body)}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json.choices[0].logprobs, null);
  }
});

test('PORTICO_IGNORE_UNSUPPORTED_FIELDS=1: allowed_token_ids / bad_words_token_ids / nvext.max_thinking_tokens are dropped unread, valid or not (admission before validation)', async () => {
  const engine = engines.get('sglang')!;
  const server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--worker', engine.url], { PORTICO_IGNORE_UNSUPPORTED_FIELDS: '1' });
  try {
    for (const body of [
      { allowed_token_ids: 'x' },
      { bad_words_token_ids: [1] },
      { nvext: { max_thinking_tokens: 'many' } },
      { allowed_token_ids: [1, 2], bad_words_token_ids: [[3]], nvext: { max_thinking_tokens: 10 }, bogus: 1 },
    ]) {
      const r = await post(server, body);
      assert.equal(r.status, 200, `${JSON.stringify(body)}: ${JSON.stringify(r.json)}`);
    }
    // Fields Portico does deliver are still validated in ignore mode.
    const bad = await post(server, { temperature: 'hot', allowed_token_ids: 'x' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.param, 'temperature');
  } finally {
    await server.stop();
  }
});

// ---- Responses API: text.format and reasoning.effort ----

test('responses: text.format json_schema / json_object reach the engine as constraints and are echoed', async () => {
  for (const protocol of PROTOCOLS) {
    const client = clients.get(protocol)!;
    const id = nextId(`${protocol}-resp`);
    const format = { type: 'json_schema' as const, name: 'city', schema: SCHEMA, strict: true };
    const r = await client.responses.create({ model: MODEL, input: 'Hi', max_output_tokens: 3, text: { format }, reasoning: { effort: 'low' } }, { headers: { 'x-request-id': id } });
    assert.deepEqual(r.text?.format, format);
    assert.equal(r.reasoning?.effort, 'low');
    assert.equal(at(received(protocol, id), 'sampling_params.json_schema'), JSON.stringify(SCHEMA));

    const id2 = nextId(`${protocol}-resp`);
    const r2 = await client.responses.create({ model: MODEL, input: 'Hi', max_output_tokens: 3, text: { format: { type: 'json_object' } } }, { headers: { 'x-request-id': id2 } });
    assert.deepEqual(r2.text?.format, { type: 'json_object' });
    const sp = received(protocol, id2).sampling_params;
    if (protocol === 'sglang') assert.equal(sp.json_schema, '{"type":"object"}');
    else assert.equal(sp.json_object, true);
  }
});

// ---- best_of: the n candidates with the highest cumulative logprob ----

test('best_of > n returns the n candidates with the highest cumulative logprob (sim engine, vLLM protocol, seeded)', async () => {
  const info = Model.load(QWEN3).info();
  const engine = await startMockEngine({ port: 0, mode: 'sim', protocol: 'vllm', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: MODEL, stepMs: 0, prefillMsPerToken: 0 });
  const server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--worker', engine.url]);
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const base = { model: MODEL, prompt: 'hello', max_tokens: 6, temperature: 1, seed: 7, ignore_eos: true };
    // The same seed gives candidate i the same tokens whether it is asked for as n or best_of.
    const all = await client.completions.create({ ...base, n: 4, logprobs: 0 });
    const sums = all.choices.map((c) => c.logprobs!.token_logprobs!.reduce((a, b) => a + b, 0));
    const order = [...sums.keys()].sort((a, b) => sums[b] - sums[a]);
    assert.notEqual(order[0], 0, `precondition: the best candidate is not the first (${sums})`);

    const one = await client.completions.create({ ...base, best_of: 4 } as OpenAI.CompletionCreateParamsNonStreaming);
    assert.equal(one.choices.length, 1);
    assert.equal(one.choices[0].index, 0);
    assert.equal(one.choices[0].text, all.choices[order[0]].text);
    assert.equal(one.choices[0].logprobs, null, 'logprobs were not asked for');
    assert.equal(one.usage!.completion_tokens, 6, 'usage counts the returned choices');

    const two = await client.completions.create({ ...base, n: 2, best_of: 4, logprobs: 0 } as OpenAI.CompletionCreateParamsNonStreaming);
    assert.deepEqual(two.choices.map((c) => c.index), [0, 1]);
    assert.deepEqual(two.choices.map((c) => c.text), [all.choices[order[0]].text, all.choices[order[1]].text]);
    assert.deepEqual(two.choices[0].logprobs, all.choices[order[0]].logprobs);
  } finally {
    await server.stop();
    await engine.close();
  }
});
