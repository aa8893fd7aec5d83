// tool_choice "required" and named (spec 003 PRE.4) through the server, with the real
// `openai` client. The engine is asked for JSON-schema guided output; the echo engine
// cannot follow a schema, so the test sends (nvext.use_raw_prompt) the JSON a guided
// engine would produce, and the server must read it back into tool calls, unary and
// streamed (id and name first, then argument fragments). Two in-process mock engines
// (SGLang and vLLM protocols) record the GenerateRequest they got, to prove the schema
// reaches the engine's own constraint field.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';

const WEATHER_PARAMETERS = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] };
const TOOLS: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: WEATHER_PARAMETERS } },
  { type: 'function', function: { name: 'get_time' } },
];

let hermes: Proc; // --tool-call-parser hermes --reasoning-parser qwen3
let forced: Proc; // no tool parser, --reasoning-parser nemotron_nano (forced, shape-aware)
let a: OpenAI;
let b: OpenAI;
const engines = new Map<'sglang' | 'vllm', { engine: MockEngine; server: Proc; client: OpenAI }>();

before(async () => {
  const common = ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1'];
  hermes = await startPortico([...common, '--tool-call-parser', 'hermes', '--reasoning-parser', 'qwen3']);
  forced = await startPortico([...common, '--reasoning-parser', 'nemotron_nano']);
  a = new OpenAI({ baseURL: `${hermes.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  b = new OpenAI({ baseURL: `${forced.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const info = Model.load(QWEN3).info();
  for (const protocol of ['sglang', 'vllm'] as const) {
    const engine = await startMockEngine({ port: 0, mode: 'echo', protocol, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: 'm' });
    const server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', engine.url]);
    engines.set(protocol, { engine, server, client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 }) });
  }
});

after(async () => {
  await hermes?.stop();
  await forced?.stop();
  for (const e of engines.values()) {
    await e.server.stop();
    await e.engine.close();
  }
});

type Params = OpenAI.ChatCompletionCreateParamsNonStreaming;
const NAMED = { type: 'function', function: { name: 'get_weather' } } as const;

function req(output: string, tool_choice: unknown, extra: object = {}): Params {
  return { model: 'm', messages: [{ role: 'user', content: output }], tools: TOOLS, tool_choice, nvext: { use_raw_prompt: true }, ...extra } as unknown as Params;
}

interface Streamed {
  reasoning: string;
  content: string;
  calls: { id?: string; name?: string; args: string; fragments: number; argsBeforeName: boolean }[];
  finish: string | null;
}

async function stream(client: OpenAI, params: Params): Promise<Streamed> {
  const s = await client.chat.completions.create({ ...params, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
  const out: Streamed = { reasoning: '', content: '', calls: [], finish: null };
  for await (const chunk of s) {
    const c = chunk.choices[0];
    if (!c) continue;
    const d = c.delta as typeof c.delta & { reasoning_content?: string };
    out.reasoning += d.reasoning_content ?? '';
    out.content += d.content ?? '';
    for (const tc of d.tool_calls ?? []) {
      const call = (out.calls[tc.index] ??= { args: '', fragments: 0, argsBeforeName: false });
      if (tc.id) call.id = tc.id;
      if (tc.function?.name) call.name = tc.function.name;
      if (tc.function?.arguments) {
        if (!call.name || !call.id) call.argsBeforeName = true;
        call.args += tc.function.arguments;
        call.fragments += 1;
      }
    }
    if (c.finish_reason) out.finish = c.finish_reason;
  }
  return out;
}

const REQUIRED_OUTPUT = '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3, "t": 1.0}}, {"name": "get_time", "parameters": {}}]';

test('tool_choice required: the guided array becomes tool calls (unary), argument bytes kept', async () => {
  const r = await a.chat.completions.create(req(REQUIRED_OUTPUT, 'required'));
  const m = r.choices[0].message;
  const calls = m.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
  assert.deepEqual(calls.map((c) => [c.function.name, c.function.arguments]), [['get_weather', '{"city": "Paris", "days": 3, "t": 1.0}'], ['get_time', '{}']]);
  assert.ok(calls[0].id && calls[1].id && calls[0].id !== calls[1].id, 'distinct ids');
  assert.equal(m.content, null);
  assert.equal(r.choices[0].finish_reason, 'tool_calls');
});

test('tool_choice required streamed: each call goes out whole (id, name, then its complete arguments) once the array closes', async () => {
  const s = await stream(a, req(REQUIRED_OUTPUT, 'required'));
  assert.deepEqual(s.calls.map((c) => [c.name, c.args]), [['get_weather', '{"city": "Paris", "days": 3, "t": 1.0}'], ['get_time', '{}']]);
  assert.ok(s.calls.every((c) => c.id && !c.argsBeforeName), 'id and name precede arguments');
  assert.equal(s.calls[0].fragments, 1, 'a call is released with complete JSON arguments');
  assert.equal(s.content, '');
  assert.equal(s.finish, 'tool_calls');
});

test('tool_choice named: the whole output is the named function\'s arguments, unary and streamed', async () => {
  const out = '{"city": "Tokyo", "days": 12345678901234567890}';
  const r = await a.chat.completions.create(req(out, NAMED));
  const calls = r.choices[0].message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
  assert.deepEqual(calls.map((c) => [c.function.name, c.function.arguments]), [['get_weather', out]]);
  assert.equal(r.choices[0].finish_reason, 'tool_calls');
  const s = await stream(a, req(out, NAMED));
  assert.deepEqual(s.calls.map((c) => [c.name, c.args]), [['get_weather', out]]);
  assert.ok(s.calls[0].id && !s.calls[0].argsBeforeName);
  assert.ok(s.calls[0].fragments > 1, 'named arguments stream too');
  assert.equal(s.finish, 'tool_calls');
});

test('required and named work without a configured tool parser; PRE.4 shape detection with a forced reasoning parser', async () => {
  // bare JSON: not reasoning, even though nemotron_nano starts inside reasoning
  const r = await b.chat.completions.create(req('[{"name": "get_time", "parameters": {}}]', 'required'));
  const m = r.choices[0].message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
  assert.equal(m.reasoning_content ?? '', '');
  assert.deepEqual((m.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[]).map((c) => c.function.name), ['get_time']);
  // reasoning, then the guided JSON
  const out = 'The user wants Paris.</think>{"city": "Paris"}';
  const r2 = await b.chat.completions.create(req(out, NAMED));
  const m2 = r2.choices[0].message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
  assert.equal(m2.reasoning_content, 'The user wants Paris.');
  assert.deepEqual((m2.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[]).map((c) => [c.function.name, c.function.arguments]), [['get_weather', '{"city": "Paris"}']]);
  const s = await stream(b, req(out, NAMED));
  assert.equal(s.reasoning, 'The user wants Paris.');
  assert.deepEqual(s.calls.map((c) => [c.name, c.args]), [['get_weather', '{"city": "Paris"}']]);
  assert.equal(s.finish, 'tool_calls');
});

test('tool_choice none: guided-looking JSON stays content', async () => {
  const r = await a.chat.completions.create(req(REQUIRED_OUTPUT, 'none'));
  assert.equal(r.choices[0].message.tool_calls, undefined);
  assert.equal(r.choices[0].message.content, REQUIRED_OUTPUT);
  assert.equal(r.choices[0].finish_reason, 'stop');
});

const WEATHER_PARAMS = JSON.stringify(WEATHER_PARAMETERS);
const REQUIRED_SCHEMA = JSON.stringify({
  type: 'array',
  minItems: 1,
  items: {
    type: 'object',
    anyOf: [
      { properties: { name: { type: 'string', enum: ['get_weather'] }, parameters: WEATHER_PARAMETERS }, required: ['name', 'parameters'] },
      { properties: { name: { type: 'string', enum: ['get_time'] }, parameters: { type: 'object', properties: {} } }, required: ['name', 'parameters'] },
    ],
  },
});

for (const protocol of ['sglang', 'vllm'] as const) {
  test(`the tool_choice schema reaches the ${protocol} engine as its JSON-schema constraint`, async () => {
    const { engine, client } = engines.get(protocol)!;
    const cases: Array<[string, unknown, object, string]> = [
      ['required', 'required', {}, REQUIRED_SCHEMA],
      ['required, parallel_tool_calls false', 'required', { parallel_tool_calls: false }, JSON.stringify({ ...JSON.parse(REQUIRED_SCHEMA), maxItems: 1 })],
      ['named', NAMED, {}, WEATHER_PARAMS],
    ];
    for (const [label, tool_choice, extra, schema] of cases) {
      const id = `tool-choice-${protocol}-${label.replace(/\W+/g, '-')}`;
      await client.chat.completions.create(
        { model: 'm', messages: [{ role: 'user', content: 'Hi' }], tools: TOOLS, tool_choice, max_tokens: 2, ...extra } as unknown as Params,
        { headers: { 'x-request-id': id } },
      );
      const got = engine.context.received.find(id);
      assert.ok(got, `${protocol} received ${id}`);
      const sp = (got.json() as { sampling_params: Record<string, unknown> }).sampling_params;
      assert.deepEqual(JSON.parse(sp.json_schema as string), JSON.parse(schema), `${protocol}: ${label}`);
    }
    // auto and none do not constrain
    const id = `tool-choice-${protocol}-auto`;
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Hi' }], tools: TOOLS, tool_choice: 'auto', max_tokens: 2 } as Params, { headers: { 'x-request-id': id } });
    assert.equal((engine.context.received.find(id)!.json() as { sampling_params: Record<string, unknown> }).sampling_params.json_schema, undefined);
  });
}
