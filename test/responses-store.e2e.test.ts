// The stateful Responses API through the real openai SDK against a real server with a
// SQLite store: chains of turns with previous_response_id (streaming and not), the
// chain's items as the next prompt (checked token for token against /tokenize of the
// expected conversation), instructions not inherited, retrieve, delete, input_items
// paging, store: false, include, and unknown ids (404 in OpenAI's shape).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { REASONING, OUTPUT } from './helpers/parser-server.js';

const MODEL = 'm';
const served = useServer(
  ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '1', '--tool-call-parser', 'hermes', '--reasoning-parser', 'qwen3', '--responses-store', 'sqlite::memory:'],
  (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }),
);

const TOOLS: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } }, strict: false }];
const CHAT_TOOLS = [{ type: 'function', function: { name: 'get_weather', parameters: TOOLS[0]!.parameters } }];

/** The prompt length of a chat conversation, as the server's template and tokenizer make it. */
async function promptTokens(messages: unknown[], tools?: unknown[]): Promise<number> {
  const res = await fetch(`${served.server.url}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages, ...(tools ? { tools } : {}) }) });
  assert.equal(res.status, 200);
  return ((await res.json()) as { tokens: number[] }).tokens.length;
}

/** The response object as the server sent it (without the SDK's additions). */
function plain(r: OpenAI.Responses.Response): Record<string, unknown> {
  const { output_text: _t, _request_id: _r, ...rest } = r as OpenAI.Responses.Response & { _request_id?: unknown };
  return rest;
}

/** `store`, which the SDK's Response type does not declare. */
function stored(r: OpenAI.Responses.Response): unknown {
  return (r as unknown as { store: unknown }).store;
}

async function status(path: string, init: RequestInit = {}): Promise<{ status: number; body: { error?: { message: string; type: string; param: string | null; code: string | null } } }> {
  const res = await fetch(`${served.server.url}${path}`, init);
  return { status: res.status, body: (await res.json()) as never };
}

test('a three-turn chain: each turn sees the stored turns before it, instructions are not inherited', async () => {
  const c = served.client;
  const t1 = await c.responses.create({ model: MODEL, instructions: 'Be brief.', input: 'First question' });
  assert.equal(stored(t1), true);
  assert.equal(t1.previous_response_id, null);
  assert.equal(t1.usage!.input_tokens, await promptTokens([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'First question' }]));

  const t2 = await c.responses.create({ model: MODEL, input: 'Second question', previous_response_id: t1.id });
  assert.equal(t2.previous_response_id, t1.id);
  assert.equal(t2.instructions, null);
  const conv2 = [
    { role: 'user', content: 'First question' },
    { role: 'assistant', content: t1.output_text },
    { role: 'user', content: 'Second question' },
  ];
  // No system message: turn 1's instructions stay with turn 1.
  assert.equal(t2.usage!.input_tokens, await promptTokens(conv2));
  assert.equal(t2.output_text, 'user\nFirst question', 'the echo engine returns the first block of the prompt it was sent');

  const t3 = await c.responses.create({ model: MODEL, instructions: 'Answer in French.', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Third' }] }], previous_response_id: t2.id });
  assert.equal(t3.usage!.input_tokens, await promptTokens([{ role: 'system', content: 'Answer in French.' }, ...conv2, { role: 'assistant', content: t2.output_text }, { role: 'user', content: 'Third' }]));

  const got = await c.responses.retrieve(t3.id);
  assert.deepEqual(plain(got), plain(t3), 'the stored object is the one returned');
});

test('a chain with reasoning and function calls: the stored items become the assistant turn and its tool messages', async () => {
  const c = served.client;
  // The echo engine returns the raw prompt: the "model" answers with reasoning, text and two tool calls.
  const t1 = await c.responses.create({ model: MODEL, input: OUTPUT, tools: TOOLS, nvext: { use_raw_prompt: true } } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
  const calls = t1.output.filter((i): i is OpenAI.Responses.ResponseFunctionToolCall => i.type === 'function_call');
  assert.deepEqual(t1.output.map((i) => i.type), ['reasoning', 'message', 'function_call', 'function_call']);
  const t2 = await c.responses.create({
    model: MODEL,
    tools: TOOLS,
    previous_response_id: t1.id,
    input: calls.map((call, i) => ({ type: 'function_call_output' as const, call_id: call.call_id, output: i === 0 ? '21°C' : '25°C' })),
  });
  const expected = [
    { role: 'user', content: OUTPUT },
    {
      role: 'assistant',
      content: 'Let me check.',
      reasoning_content: REASONING,
      tool_calls: calls.map((call) => ({ id: call.call_id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
    },
    { role: 'tool', tool_call_id: calls[0]!.call_id, content: '21°C' },
    { role: 'tool', tool_call_id: calls[1]!.call_id, content: '25°C' },
  ];
  assert.equal(t2.usage!.input_tokens, await promptTokens(expected, CHAT_TOOLS));
});

test('streaming chain: response.completed is sent after the response is stored, and retrieve returns it', async () => {
  const c = served.client;
  const t1 = await c.responses.create({ model: MODEL, input: 'Stream one' });
  const stream = await c.responses.create({ model: MODEL, input: 'Stream two', previous_response_id: t1.id, stream: true });
  let completed: OpenAI.Responses.Response | undefined;
  let created: OpenAI.Responses.Response | undefined;
  for await (const ev of stream) {
    if (ev.type === 'response.created') created = ev.response;
    if (ev.type === 'response.completed') {
      completed = ev.response;
      // Still inside the stream: the stored copy must already be there.
      const got = await c.responses.retrieve(ev.response.id);
      assert.equal(got.status, 'completed');
      assert.deepEqual(got.output, ev.response.output);
    }
  }
  assert.ok(completed && created);
  assert.equal(created.previous_response_id, t1.id);
  assert.equal(stored(created), true);
  assert.equal(completed.usage!.input_tokens, await promptTokens([{ role: 'user', content: 'Stream one' }, { role: 'assistant', content: t1.output_text }, { role: 'user', content: 'Stream two' }]));
  // And a unary turn continues the streamed one.
  const t3 = await c.responses.create({ model: MODEL, input: 'three', previous_response_id: completed.id });
  assert.equal(t3.previous_response_id, completed.id);
});

test('input_items lists the request\'s own input items, newest first by default, paged with limit and after', async () => {
  const c = served.client;
  const input = [
    { role: 'developer' as const, content: 'Rules.' },
    { role: 'user' as const, content: 'one' },
    { role: 'assistant' as const, content: 'two' },
    { role: 'user' as const, content: [{ type: 'input_text' as const, text: 'three' }] },
  ];
  const r = await c.responses.create({ model: MODEL, input });
  const page = await c.responses.inputItems.list(r.id, { limit: 3 });
  const texts = (items: OpenAI.Responses.ResponseItem[]) => items.map((i) => (i.type === 'message' ? (i.content[0] as { text: string }).text : i.type));
  assert.deepEqual(texts(page.data), ['three', 'two', 'one']);
  assert.equal(page.has_more, true);
  assert.ok(page.data.every((i) => i.type === 'message' && typeof i.id === 'string' && i.id.startsWith('msg_')));
  const all: OpenAI.Responses.ResponseItem[] = [];
  for await (const item of c.responses.inputItems.list(r.id, { limit: 1, order: 'asc' })) all.push(item);
  assert.deepEqual(texts(all), ['Rules.', 'one', 'two', 'three']);
  const first = all[0] as OpenAI.Responses.ResponseInputMessageItem;
  assert.equal(first.role, 'developer');
  assert.deepEqual(first.content, [{ type: 'input_text', text: 'Rules.' }]);
  // A chained response lists only its own input.
  const next = await c.responses.create({ model: MODEL, input: 'follow-up', previous_response_id: r.id });
  assert.deepEqual(texts((await c.responses.inputItems.list(next.id)).data), ['follow-up']);

  for (const [q, param] of [['limit=0', 'limit'], ['limit=101', 'limit'], ['order=up', 'order'], ['after=msg_nope', 'after']] as const) {
    const bad = await status(`/v1/responses/${r.id}/input_items?${q}`);
    assert.equal(bad.status, 400, q);
    assert.equal(bad.body.error!.param, param);
  }
});

test('delete: the response is gone for retrieve, delete, input_items and previous_response_id', async () => {
  const c = served.client;
  const r = await c.responses.create({ model: MODEL, input: 'to be deleted' });
  const del = await status(`/v1/responses/${r.id}`, { method: 'DELETE' });
  assert.equal(del.status, 200);
  assert.deepEqual(del.body, { id: r.id, object: 'response', deleted: true });
  await assert.rejects(c.responses.retrieve(r.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
  await assert.rejects(c.responses.delete(r.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
  await assert.rejects(c.responses.inputItems.list(r.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
  await assert.rejects(c.responses.create({ model: MODEL, input: 'x', previous_response_id: r.id }), (e: unknown) => e instanceof OpenAI.NotFoundError && e.param === 'previous_response_id');
});

test('deleting a response in the middle of a chain: continuing after it is a 404 naming the missing link', async () => {
  const c = served.client;
  const a = await c.responses.create({ model: MODEL, input: 'a' });
  const b = await c.responses.create({ model: MODEL, input: 'b', previous_response_id: a.id });
  await c.responses.delete(a.id);
  const res = await status('/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, input: 'c', previous_response_id: b.id }) });
  assert.equal(res.status, 404);
  assert.match(res.body.error!.message, new RegExp(a.id));
  assert.equal((await c.responses.retrieve(b.id)).id, b.id, 'b itself is still stored');
});

test('store: false is answered, never retrievable, and cannot be continued', async () => {
  const c = served.client;
  const r = await c.responses.create({ model: MODEL, input: 'ephemeral', store: false });
  assert.equal(stored(r), false);
  await assert.rejects(c.responses.retrieve(r.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
  await assert.rejects(c.responses.create({ model: MODEL, input: 'x', previous_response_id: r.id }), (e: unknown) => e instanceof OpenAI.NotFoundError);
  const s = await c.responses.create({ model: MODEL, input: 'ephemeral stream', store: false, stream: true });
  let id = '';
  for await (const ev of s) if (ev.type === 'response.completed') id = ev.response.id;
  assert.ok(id);
  await assert.rejects(c.responses.retrieve(id), (e: unknown) => e instanceof OpenAI.NotFoundError);
});

const UNKNOWN = 'resp_00000000000000000000000000000000';

test('unknown ids are 404 in OpenAI\'s error shape on every route; the server goes on serving', async () => {
  const expected = { message: `Response with id '${UNKNOWN}' not found.`, type: 'invalid_request_error', param: null, code: null };
  for (const [path, init] of [
    [`/v1/responses/${UNKNOWN}`, {}],
    [`/v1/responses/${UNKNOWN}`, { method: 'DELETE' }],
    [`/v1/responses/${UNKNOWN}/input_items`, {}],
    ['/v1/responses/not-even-an-id', {}],
  ] as const) {
    const r = await status(path, init);
    assert.equal(r.status, 404, path);
    assert.equal(r.body.error!.type, 'invalid_request_error');
    if (path.includes(UNKNOWN)) assert.deepEqual(r.body.error, expected);
  }
  const chained = await status('/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, input: 'x', previous_response_id: UNKNOWN }) });
  assert.equal(chained.status, 404);
  assert.deepEqual(chained.body.error, { ...expected, param: 'previous_response_id' });
  const stream = await status('/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, input: 'x', previous_response_id: UNKNOWN, stream: true }) });
  assert.equal(stream.status, 404, 'a streaming request with an unknown previous id fails before the stream starts');
  for (const bad of [{ previous_response_id: '' }, { previous_response_id: 7 }]) {
    const r = await status('/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, input: 'x', ...bad }) });
    assert.equal(r.status, 400);
    assert.equal(r.body.error!.param, 'previous_response_id');
  }
  const ok = await served.client.responses.create({ model: MODEL, input: 'still serving' });
  assert.equal(ok.status, 'completed');
});

test('include: OpenAI values Portico cannot honour are a 400 unsupported_parameter, others invalid_value', async () => {
  const post = (include: unknown) => status('/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, input: 'x', include }) });
  const unsupported = await post(['web_search_call.results']);
  assert.equal(unsupported.status, 400);
  assert.equal(unsupported.body.error!.code, 'unsupported_parameter');
  assert.equal(unsupported.body.error!.param, 'include');
  const invalid = await post(['no.such.value']);
  assert.equal(invalid.status, 400);
  assert.equal(invalid.body.error!.code, 'invalid_value');
  assert.equal((await post('reasoning.encrypted_content')).status, 400);
  assert.equal((await post([])).status, 200);
  assert.equal((await post(['message.output_text.logprobs'])).status, 200, 'honoured (responses.e2e tests what it returns)');
  const r = await served.client.responses.create({ model: MODEL, input: 'x' });
  assert.equal((await status(`/v1/responses/${r.id}?include[]=code_interpreter_call.outputs`)).body.error!.code, 'unsupported_parameter');
  assert.equal((await status(`/v1/responses/${r.id}?stream=true`)).status, 400);
});
