// Parser conformance (docs/parsers.md), through a running server with the real openai SDK, unary and
// streamed: the echo engine returns the text sent (nvext.use_raw_prompt), so the model's
// "output" is chosen by the test and tokenized by the real Qwen3 tokenizer. The same
// cases run at every split point in the native conformance suite (native/core
// parsers::conformance).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { useParserServer } from './helpers/parser-server.js';

const client = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
const serve = (tool: string, reasoning: string) => ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1', '--tool-call-parser', tool, '--reasoning-parser', reasoning];

const hermes = useParserServer(client); // hermes + qwen3
const dflt = useServer(serve('default', 'qwen3'), client);
const mistral = useServer(serve('mistral', 'qwen'), client);

const fn = (name: string): OpenAI.ChatCompletionTool => ({ type: 'function', function: { name, parameters: { type: 'object', properties: { city: { type: 'string' } } } } });
const TOOLS = [fn('get_weather'), fn('get_time')];

type Msg = OpenAI.ChatCompletionMessage & { reasoning_content?: string };
interface Out { reasoning: string; content: string; calls: { id?: string; name?: string; args: string }[]; finish: string | null }

function body(text: string, extra: object = {}) {
  return { model: 'm', messages: [{ role: 'user', content: text }], tools: TOOLS, nvext: { use_raw_prompt: true }, ...extra } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
}

async function unary(c: OpenAI, text: string, extra: object = {}): Promise<Out> {
  const r = await c.chat.completions.create(body(text, extra));
  const m = r.choices[0].message as Msg;
  const calls = (m.tool_calls ?? []).map((t) => { const f = t as OpenAI.ChatCompletionMessageFunctionToolCall; return { id: f.id, name: f.function.name, args: f.function.arguments }; });
  return { reasoning: m.reasoning_content ?? '', content: m.content ?? '', calls, finish: r.choices[0].finish_reason };
}

async function streamed(c: OpenAI, text: string, extra: object = {}): Promise<Out> {
  const s = await c.chat.completions.create({ ...body(text, extra), stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
  const o: Out = { reasoning: '', content: '', calls: [], finish: null };
  for await (const chunk of s) {
    const ch = chunk.choices[0];
    if (!ch) continue;
    const d = ch.delta as typeof ch.delta & { reasoning_content?: string };
    o.reasoning += d.reasoning_content ?? '';
    o.content += d.content ?? '';
    for (const tc of d.tool_calls ?? []) {
      o.calls[tc.index] ??= { args: '' };
      if (tc.id) o.calls[tc.index].id = tc.id;
      if (tc.function?.name) o.calls[tc.index].name = tc.function.name;
      o.calls[tc.index].args += tc.function?.arguments ?? '';
    }
    if (ch.finish_reason) o.finish = ch.finish_reason;
  }
  return o;
}

/** Unary and streamed give the same message; returns it. */
async function both(c: OpenAI, text: string, extra: object = {}): Promise<Out> {
  const u = await unary(c, text, extra);
  const s = await streamed(c, text, extra);
  assert.deepEqual(s.calls.map((x) => [x.name, x.args]), u.calls.map((x) => [x.name, x.args]), 'streamed calls equal unary');
  assert.deepEqual([s.reasoning, s.content, s.finish], [u.reasoning, u.content, u.finish], 'streamed text equals unary');
  return u;
}

const names = (o: Out) => o.calls.map((c) => [c.name, JSON.parse(c.args)]);

test('default parser: bare JSON call object or array, arguments or parameters, with or without a wrapper', async () => {
  const c = dflt.client;
  let o = await both(c, '{"name": "get_weather", "parameters": {"city": "Paris"}}');
  assert.deepEqual(names(o), [['get_weather', { city: 'Paris' }]]);
  assert.equal(o.finish, 'tool_calls');
  o = await both(c, '[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "parameters": {}}]');
  assert.deepEqual(names(o), [['get_weather', { city: 'Paris' }], ['get_time', {}]]);
  o = await both(c, '<TOOLCALL>[{"name": "get_time", "arguments": {"city": "Rome"}}]</TOOLCALL>');
  assert.deepEqual(names(o), [['get_time', { city: 'Rome' }]]);
  // a JSON answer that is not a call stays content
  o = await both(c, '{"answer": 42}');
  assert.deepEqual([o.calls.length, o.content, o.finish], [0, '{"answer": 42}', 'stop']);
});

test('mistral: the optional [/TOOL_CALLS] end marker is consumed, never content', async () => {
  const o = await both(mistral.client, '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}][/TOOL_CALLS]');
  assert.deepEqual(names(o), [['get_weather', { city: 'Paris' }]]);
  assert.equal(o.content, '');
  const v11 = await both(mistral.client, '[TOOL_CALLS]get_time[ARGS]{"city": "Oslo"}[/TOOL_CALLS]');
  assert.deepEqual([names(v11), v11.content], [[['get_time', { city: 'Oslo' }]], '']);
});

test('a call whose JSON never completes or is malformed is content, not a call with invalid arguments', async () => {
  const c = hermes.client;
  const cut = 'Sure. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Par';
  let o = await both(c, cut);
  assert.deepEqual([o.calls.length, o.content, o.finish], [0, cut, 'stop']);
  const bad = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris" "x"}}\n</tool_call>';
  const good = '<tool_call>\n{"name": "get_time", "arguments": {"city": "Rome"}}\n</tool_call>';
  o = await both(c, `${bad} then ${good} done`);
  assert.deepEqual(names(o), [['get_time', { city: 'Rome' }]], 'the good call after it is kept');
  assert.equal(o.content, `${bad} then  done`, 'nothing after it is lost');
  // the server goes on serving
  o = await both(c, good);
  assert.deepEqual(names(o), [['get_time', { city: 'Rome' }]]);
});

test('qwen3 / qwen: text before a </think> nothing opened is reasoning', async () => {
  for (const c of [hermes.client, mistral.client]) {
    let o = await both(c, 'pondering the question</think>The answer.');
    assert.deepEqual([o.reasoning, o.content], ['pondering the question', 'The answer.']);
    o = await both(c, '<think>explicit</think>Answer.');
    assert.deepEqual([o.reasoning, o.content], ['explicit', 'Answer.']);
    o = await both(c, 'Just an answer.');
    assert.deepEqual([o.reasoning, o.content], ['', 'Just an answer.']);
  }
});

test('parallel_tool_calls false returns at most one call; a function not in tools is no tool call', async () => {
  const c = hermes.client;
  const two = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {"city": "Rome"}}\n</tool_call>';
  let o = await both(c, two, { parallel_tool_calls: false });
  assert.deepEqual(names(o), [['get_weather', { city: 'Paris' }]]);
  assert.equal(o.finish, 'tool_calls');
  o = await both(c, two, { parallel_tool_calls: true });
  assert.equal(o.calls.length, 2);
  const other = '<tool_call>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>';
  o = await both(c, other);
  assert.deepEqual([o.calls.length, o.content, o.finish], [0, other, 'stop'], 'an unoffered function is content');
  // a bad parallel_tool_calls is a 400, and the next request succeeds
  await assert.rejects(c.chat.completions.create(body(two, { parallel_tool_calls: 'no' })), (e: unknown) => e instanceof OpenAI.APIError && e.status === 400);
  o = await both(c, two, { parallel_tool_calls: false });
  assert.equal(o.calls.length, 1);
});
