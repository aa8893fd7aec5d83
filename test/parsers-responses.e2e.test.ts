// OpenAI Responses /v1/responses with the model's parsers: `reasoning` and
// `function_call` output items, their streaming events through the openai SDK's
// responses.stream(), tool_choice and reasoning / function_call input items. The echo
// engine returns the text sent (nvext.use_raw_prompt), tokenized by the real Qwen3 tokenizer.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3 } from './helpers/portico.js';
import { useParserServer, REASONING, OUTPUT } from './helpers/parser-server.js';
import { Model } from '../src/native/core.js';

const tok = Model.load(QWEN3);

const served = useParserServer((url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

const TOOLS: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } }, strict: false }];

function params(input: string, extra: object = {}): OpenAI.Responses.ResponseCreateParamsNonStreaming {
  return { model: 'm', input, tools: TOOLS, nvext: { use_raw_prompt: true }, ...extra } as OpenAI.Responses.ResponseCreateParamsNonStreaming;
}

/** Output items without their random ids. */
function shape(output: OpenAI.Responses.ResponseOutputItem[]): unknown[] {
  return output.map((item) => {
    if (item.type === 'function_call') return { type: item.type, name: item.name, arguments: JSON.parse(item.arguments), status: item.status };
    if (item.type === 'message') return { type: item.type, status: item.status, text: item.content.map((c) => (c.type === 'output_text' ? c.text : '')).join('') };
    if (item.type === 'reasoning') return { type: item.type, summary: item.summary, content: item.content, status: item.status };
    return item;
  });
}

const EXPECTED = [
  { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: REASONING }], status: 'completed' },
  { type: 'message', status: 'completed', text: 'Let me check.' },
  { type: 'function_call', name: 'get_weather', arguments: { city: 'Paris', days: 3 }, status: 'completed' },
  { type: 'function_call', name: 'get_weather', arguments: { city: 'Rome' }, status: 'completed' },
];

test('reasoning, message and parallel function_call items (non-streaming)', async () => {
  const r = await served.client.responses.create(params(OUTPUT));
  assert.equal(r.status, 'completed');
  assert.deepEqual(shape(r.output), EXPECTED);
  assert.equal(r.output_text, 'Let me check.');
  const calls = r.output.filter((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall[];
  assert.ok(calls.every((c) => /^fc_/.test(c.id!) && /^call_/.test(c.call_id)));
  assert.equal(new Set(calls.map((c) => c.call_id)).size, 2, 'distinct call ids');
  assert.equal(new Set(r.output.map((i) => i.id)).size, 4, 'distinct item ids');
  assert.equal(r.usage!.output_tokens_details.reasoning_tokens, tok.encode(REASONING, false).length, 'the reasoning text in tokens');
});

test('responses.stream: the item events in order, and the SDK assembles the same items', async () => {
  const stream = served.client.responses.stream(params(OUTPUT) as unknown as OpenAI.Responses.ResponseCreateParamsStreaming);
  const types: string[] = [];
  let reasoning = '';
  const argsDone: { name: string; arguments: string }[] = [];
  const argDeltas: string[] = [];
  stream.on('event', (e) => {
    if (types.at(-1) !== e.type) types.push(e.type);
  });
  stream.on('response.reasoning_text.delta', (e) => (reasoning += e.delta));
  stream.on('response.function_call_arguments.delta', (e) => argDeltas.push(e.snapshot));
  stream.on('response.function_call_arguments.done', (e) => argsDone.push({ name: e.name, arguments: e.arguments }));
  const r = await stream.finalResponse();
  assert.deepEqual(types, [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    'response.reasoning_text.delta',
    'response.reasoning_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.completed',
  ]);
  assert.equal(reasoning, REASONING);
  assert.deepEqual(argsDone.map((a) => [a.name, JSON.parse(a.arguments)]), [['get_weather', { city: 'Paris', days: 3 }], ['get_weather', { city: 'Rome' }]]);
  assert.deepEqual(JSON.parse(argDeltas.at(-1)!), { city: 'Rome' }, 'the SDK snapshot of the last call');
  assert.deepEqual(shape(r.output), EXPECTED);
  assert.equal(r.status, 'completed');
  assert.equal(r.usage!.output_tokens_details.reasoning_tokens, tok.encode(REASONING, false).length);
});

test('raw stream: sequence numbers count up and every item event names its item and index', async () => {
  const res = await fetch(`${served.server.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...params(OUTPUT), stream: true }) });
  const events = (await res.text())
    .split('\n\n')
    .filter((b) => b.startsWith('event: '))
    .map((b) => JSON.parse(b.slice(b.indexOf('data: ') + 6)) as { type: string; sequence_number: number; output_index?: number; item_id?: string; item?: { id: string } });
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
  const added = events.filter((e) => e.type === 'response.output_item.added');
  assert.deepEqual(added.map((e) => e.output_index), [0, 1, 2, 3]);
  for (const e of events) {
    if (e.item_id !== undefined) assert.equal(e.item_id, added[e.output_index!].item!.id, `${e.type} names the item it belongs to`);
  }
});

test('max_output_tokens cutting a reasoning item: the open item and the response are incomplete', async () => {
  const r = await served.client.responses.create(params('<think>a long line of reasoning that goes on', { max_output_tokens: 4 }));
  assert.equal(r.status, 'incomplete');
  assert.equal(r.output.length, 1);
  assert.equal(r.output[0].type, 'reasoning');
  assert.equal((r.output[0] as OpenAI.Responses.ResponseReasoningItem).status, 'incomplete');
});

test('parallel_tool_calls false: the parser returns the first function_call only (unary and streamed)', async () => {
  const p = params(OUTPUT, { parallel_tool_calls: false });
  const r = await served.client.responses.create(p);
  assert.deepEqual(shape(r.output), EXPECTED.slice(0, 3));
  assert.equal(r.parallel_tool_calls, false, 'echoed back');
  const streamed = await served.client.responses.stream(p as unknown as OpenAI.Responses.ResponseCreateParamsStreaming).finalResponse();
  assert.deepEqual(shape(streamed.output), EXPECTED.slice(0, 3));
});

test('tool_choice none: no function_call items, the markup stays text', async () => {
  const text = '<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>';
  const r = await served.client.responses.create(params(text, { tool_choice: 'none' }));
  assert.deepEqual(shape(r.output), [{ type: 'message', status: 'completed', text }]);
  assert.equal(r.tool_choice, 'none', 'echoed back');
  assert.equal(r.usage!.output_tokens_details.reasoning_tokens, 0);
});

test('tool_choice required: the guided JSON array becomes function_call items (streamed)', async () => {
  const json = '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}, {"name": "get_weather", "parameters": {"city": "Rome"}}]';
  const r = await served.client.responses.stream(params(json, { tool_choice: 'required' }) as unknown as OpenAI.Responses.ResponseCreateParamsStreaming).finalResponse();
  assert.deepEqual(shape(r.output), [
    { type: 'function_call', name: 'get_weather', arguments: { city: 'Paris', days: 3 }, status: 'completed' },
    { type: 'function_call', name: 'get_weather', arguments: { city: 'Rome' }, status: 'completed' },
  ]);
  assert.equal(r.tool_choice, 'required');
});

test('tool_choice naming a function: the guided arguments object becomes one function_call item', async () => {
  const r = await served.client.responses.create(params('{"city": "Oslo"}', { tool_choice: { type: 'function', name: 'get_weather' } }));
  assert.deepEqual(shape(r.output), [{ type: 'function_call', name: 'get_weather', arguments: { city: 'Oslo' }, status: 'completed' }]);
});

test('without tools, tool markup stays text', async () => {
  const r = await served.client.responses.create({ ...params('a <tool_call>{}</tool_call> b'), tools: undefined });
  assert.equal(r.output_text, 'a <tool_call>{}</tool_call> b');
});

test('reasoning, function_call and function_call_output input items render like the chat messages they stand for', async () => {
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: TOOLS[0].parameters } }];
  const responses = await served.client.responses.create({
    model: 'm',
    tools: TOOLS,
    max_output_tokens: 1,
    input: [
      { role: 'user', content: 'Weather in Paris?' },
      { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'Need the tool.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '21°C' },
    ],
  } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
  const chat = await served.client.chat.completions.create({
    model: 'm',
    tools,
    max_tokens: 1,
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', reasoning_content: 'Need the tool.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '21°C' },
    ],
  } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(responses.usage!.input_tokens, chat.usage!.prompt_tokens);
});

async function raw(body: unknown): Promise<{ status: number; json: { error: { message: string; param: string | null; code: string | null } } }> {
  const res = await fetch(`${served.server.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as { error: { message: string; param: string | null; code: string | null } } };
}

const BASE = { model: 'm', input: 'x', tools: TOOLS };
const BAD: [string, unknown, string | null, RegExp][] = [
  ['tool_choice required with a text.format schema', { ...BASE, tool_choice: 'required', text: { format: { type: 'json_object' } } }, null, /cannot be combined with a `text.format` schema/],
  ['tool_choice naming an unknown function', { ...BASE, tool_choice: { type: 'function', name: 'nope' } }, null, /names the function `nope`, which is not in `tools`/],
  ['tool_choice required without tools', { model: 'm', input: 'x', tool_choice: 'required' }, null, /needs at least one tool/],
  ['tool_choice unknown string', { ...BASE, tool_choice: 'sometimes' }, null, /`tool_choice` must be "none", "auto", "required"/],
  ['reasoning item with a summary part', { model: 'm', input: [{ type: 'reasoning', summary: [], content: [{ type: 'summary_text', text: 'x' }] }] }, null, /`input\[0\].content\[0\]` must be a reasoning_text part/],
];
for (const [name, body, code, message] of BAD) {
  test(`bad responses request (${name}) is a 400`, async () => {
    const r = await raw(body);
    assert.equal(r.status, 400);
    assert.match(r.json.error.message, message);
    assert.equal(r.json.error.code, code);
    const ok = await served.client.responses.create(params('<think>a</think>b'));
    assert.deepEqual(shape(ok.output).map((i) => (i as { type: string }).type), ['reasoning', 'message']);
  });
}

test('a previous response sent back as input (reasoning, message, function_call items) renders like the chat messages it stands for', async () => {
  const first = await served.client.responses.create(params(OUTPUT));
  const calls = first.output.filter((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall[];
  const next = await served.client.responses.create({
    model: 'm',
    tools: TOOLS,
    max_output_tokens: 1,
    input: [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      ...(first.output as OpenAI.Responses.ResponseInputItem[]),
      ...calls.map((c, i) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: i === 0 ? '21°C' : '25°C' })),
    ],
  });
  const chat = await served.client.chat.completions.create({
    model: 'm',
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: TOOLS[0].parameters } }],
    max_tokens: 1,
    messages: [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      { role: 'assistant', content: 'Let me check.', reasoning_content: REASONING, tool_calls: calls.map((c) => ({ id: c.call_id, type: 'function', function: { name: c.name, arguments: c.arguments } })) },
      { role: 'tool', tool_call_id: calls[0].call_id, content: '21°C' },
      { role: 'tool', tool_call_id: calls[1].call_id, content: '25°C' },
    ],
  } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(next.status, 'incomplete');
  assert.equal(next.usage!.input_tokens, chat.usage!.prompt_tokens);
});

test('max_output_tokens cutting a call: incomplete, and the unfinished call is text (never a function_call with invalid JSON)', async () => {
  const text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>';
  const ids = tok.encode(text, false);
  let k = 1;
  while (!tok.decode(ids.subarray(0, k), false).includes('"Par')) k++;
  const cut = tok.decode(ids.subarray(0, k), false);
  const r = await served.client.responses.create(params(text, { max_output_tokens: k }));
  assert.equal(r.status, 'incomplete');
  assert.deepEqual(r.output.map((o) => o.type), ['message']);
  assert.equal(r.output_text, cut);
});
