// Bad input gets a clear OpenAI-shaped error with the right status, and the server
// keeps serving after each one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';

const MODEL = 'qwen3';

const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '1', '--max-body-bytes', '100000'], (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

async function post(body: string | Buffer, path = '/v1/chat/completions'): Promise<{ status: number; json: OpenAIErrorBody }> {
  const res = await fetch(`${served.server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : new Uint8Array(body) });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) as OpenAIErrorBody };
}

function assertErrorShape(json: OpenAIErrorBody): void {
  assert.deepEqual(Object.keys(json), ['error']);
  assert.deepEqual(Object.keys(json.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(typeof json.error.message, 'string');
  assert.ok(json.error.message.length > 0);
}

async function stillServing(): Promise<void> {
  const r = await served.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'still here' }], nvext: { use_raw_prompt: true } } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(r.choices[0].message.content, 'still here');
}

const MALFORMED: Record<string, string> = {
  'truncated object': '{"model": "qwen3", "messages": [',
  'not JSON at all': 'hello',
  'trailing comma': '{"model": "qwen3", "messages": [{"role": "user", "content": "x"}],}',
  'garbage after the object': '{"model": "qwen3", "messages": [{"role": "user", "content": "x"}]} extra',
  'bad escape deep inside a message': '{"model": "qwen3", "messages": [{"role": "user", "content": "a\\qb"}]}',
  'empty body': '',
};

for (const [name, body] of Object.entries(MALFORMED)) {
  test(`malformed JSON (${name}) is a 400 in OpenAI error shape`, async () => {
    const { status, json } = await post(body);
    assert.equal(status, 400);
    assertErrorShape(json);
    assert.equal(json.error.type, 'invalid_request_error');
    await stillServing();
  });
}

test('invalid UTF-8 inside a message is a 400', async () => {
  const body = Buffer.concat([Buffer.from('{"model":"qwen3","messages":[{"role":"user","content":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]);
  const { status, json } = await post(body);
  assert.equal(status, 400);
  assertErrorShape(json);
  await stillServing();
});

test('a body that is JSON but not an object is a 400', async () => {
  const { status, json } = await post('[1,2,3]');
  assert.equal(status, 400);
  assertErrorShape(json);
  await stillServing();
});

test('an unknown model is a 404 with code model_not_found', async () => {
  await assert.rejects(
    served.client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError);
      assert.equal(err.status, 404);
      assert.equal(err.code, 'model_not_found');
      assert.match(err.message, /no-such-model/);
      return true;
    },
  );
  await stillServing();
});

test('unsupported fields are rejected by name', async () => {
  const { status, json } = await post(JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x' }], frobnicate: 1, zap: true }));
  assert.equal(status, 400);
  assertErrorShape(json);
  assert.equal(json.error.message, 'Unsupported parameter(s): `frobnicate`, `zap`');
  await stillServing();
});

test('unknown nvext keys are rejected', async () => {
  const { status, json } = await post(JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x' }], nvext: { use_raw_prompt: true, nope: 1 } }));
  assert.equal(status, 400);
  assert.match(json.error.message, /`nvext\.nope`/);
  await stillServing();
});

const INVALID: [string, object, RegExp][] = [
  ['model missing', { messages: [{ role: 'user', content: 'x' }] }, /`model` is required/],
  ['model blank', { model: '  ', messages: [{ role: 'user', content: 'x' }] }, /`model` must not be blank/],
  ['model not a string', { model: 3, messages: [{ role: 'user', content: 'x' }] }, /`model` must be a string/],
  ['messages missing', { model: MODEL }, /`messages` is required/],
  ['messages empty', { model: MODEL, messages: [] }, /`messages` must not be empty/],
  ['temperature out of range', { model: MODEL, messages: [{ role: 'user', content: 'x' }], temperature: 2.5 }, /`temperature`/],
  ['max_tokens zero', { model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }, /`max_tokens` must be greater than 0/],
  ['max_tokens not an integer', { model: MODEL, messages: [{ role: 'user', content: 'x' }], max_tokens: 1.5 }, /`max_tokens` must be an integer/],
  ['stream not a boolean', { model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: 'yes' }, /`stream` must be a boolean/],
  ['stream_options without stream', { model: MODEL, messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: true } }, /`stream_options`/],
  ['n above 128', { model: MODEL, messages: [{ role: 'user', content: 'x' }], n: 129 }, /`n` must be at least 1 and at most 128/],
  ['n zero', { model: MODEL, messages: [{ role: 'user', content: 'x' }], n: 0 }, /`n` must be at least 1/],
  ['n > 1 with greedy sampling', { model: MODEL, messages: [{ role: 'user', content: 'x' }], n: 2, temperature: 0 }, /non-zero `temperature`/],
  ['tools not an array', { model: MODEL, messages: [{ role: 'user', content: 'x' }], tools: {} }, /`tools` must be an array/],
  ['tool without function', { model: MODEL, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function' }] }, /`tools\[0\]\.function` is required/],
  ['tool of another type', { model: MODEL, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'retrieval' }] }, /`tools\[0\]\.type` must be "function"/],
  ['tool name with spaces', { model: MODEL, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'get weather' } }] }, /function\.name` must be 1 to 96 characters/],
  ['tool name too long', { model: MODEL, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'a'.repeat(97) } }] }, /1 to 96 characters/],
  ['tool parameters not an object', { model: MODEL, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] }, /parameters` must be an object/],
  ['too many tools', { model: MODEL, messages: [{ role: 'user', content: 'x' }], tools: Array.from({ length: 1537 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })) }, /at most 1536 tools/],
  ['tool_choice required without tools', { model: MODEL, messages: [{ role: 'user', content: 'x' }], tool_choice: 'required' }, /"required" needs at least one tool/],
  ['tool_choice naming a missing tool', { model: MODEL, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: { type: 'function', function: { name: 'g' } } }, /`g`, which is not in `tools`/],
  ['tool_choice unknown string', { model: MODEL, messages: [{ role: 'user', content: 'x' }], tool_choice: 'sometimes' }, /must be "none", "auto", "required"/],
  ['tool_choice malformed object', { model: MODEL, messages: [{ role: 'user', content: 'x' }], tool_choice: { type: 'function' } }, /\{"type": "function", "function": \{"name"/],
  ['chat_template_args replacing the template', { model: MODEL, messages: [{ role: 'user', content: 'x' }], chat_template_args: { chat_template: '{{ 1 }}' } }, /may not contain `chat_template`/],
  ['chat_template_args and its alias together', { model: MODEL, messages: [{ role: 'user', content: 'x' }], chat_template_args: {}, chat_template_kwargs: {} }, /not both/],
  ['chat_template_kwargs not an object', { model: MODEL, messages: [{ role: 'user', content: 'x' }], chat_template_kwargs: [1] }, /`chat_template_kwargs` must be an object/],
  ['message that is not an object', { model: MODEL, messages: ['hello'] }, /./],
];

for (const [name, body, message] of INVALID) {
  test(`invalid request (${name}) is a 400 with a precise message`, async () => {
    const { status, json } = await post(JSON.stringify(body));
    assert.equal(status, 400);
    assertErrorShape(json);
    assert.match(json.error.message, message);
    await stillServing();
  });
}

test('a body over --max-body-bytes is a 413', async () => {
  const big = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x'.repeat(200_000) }] });
  const { status, json } = await post(big);
  assert.equal(status, 413);
  assertErrorShape(json);
  await stillServing();
});

test('an unknown route is a 404 in OpenAI error shape', async () => {
  const { status, json } = await post('{}', '/v1/nope');
  assert.equal(status, 404);
  assertErrorShape(json);
});
