// POST /v1/messages and /v1/messages/count_tokens with the real @anthropic-ai/sdk
// against the real server and echo engines: shapes, streaming events, errors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { Model } from '../src/native/core.js';

const MODEL = 'qwen3';
const tok = Model.load(QWEN3);

const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '1'], (url) => new Anthropic({ baseURL: url, apiKey: 'unused', maxRetries: 0 }));

// The echo engine answers with the rendered prompt, special tokens skipped, up to the
// first <|im_end|> (an EOS id of Qwen3, which ends the message).
const ECHO = 'system\nBe brief.';

test('a message comes back in Anthropic shape with usage', async () => {
  const m = await served.client.messages.create({ model: MODEL, max_tokens: 200, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi 👋' }] });
  assert.equal(m.type, 'message');
  assert.equal(m.role, 'assistant');
  assert.match(m.id, /^msg_/);
  assert.equal(m.model, MODEL);
  assert.deepEqual(m.content, [{ type: 'text', text: ECHO }]);
  assert.equal(m.stop_reason, 'end_turn');
  assert.equal(m.stop_sequence, null);
  assert.equal(m.usage.output_tokens, tok.encode('<|im_start|>system\nBe brief.<|im_end|>', false).length, 'tokens through the EOS');
  assert.equal(m.usage.input_tokens, tok.encode('<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi 👋<|im_end|>\n<|im_start|>assistant\n', false).length);
});

test('max_tokens ends with stop_reason max_tokens', async () => {
  const m = await served.client.messages.create({ model: MODEL, max_tokens: 2, messages: [{ role: 'user', content: 'a long enough prompt' }] });
  assert.equal(m.stop_reason, 'max_tokens');
  assert.equal(m.usage.output_tokens, 2);
});

test('streaming follows the event sequence and the SDK assembles the same message', async () => {
  const stream = served.client.messages.stream({ model: MODEL, max_tokens: 200, system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi 👋' }] }] });
  const types: string[] = [];
  stream.on('streamEvent', (e) => types.push(e.type));
  const m = await stream.finalMessage();
  assert.equal(m.content.length, 1);
  assert.equal(m.content[0].type, 'text');
  assert.equal((m.content[0] as { text: string }).text, ECHO);
  assert.equal(m.stop_reason, 'end_turn');
  assert.equal(types[0], 'message_start');
  assert.equal(types[1], 'content_block_start');
  assert.ok(types.includes('content_block_delta'));
  assert.deepEqual(types.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
});

test('stop_sequences give stop_reason stop_sequence with the sequence', async () => {
  const m = await served.client.messages.create({ model: MODEL, max_tokens: 300, stop_sequences: ['friend', 'there'], messages: [{ role: 'user', content: 'hello there friend' }] });
  assert.equal(m.stop_reason, 'stop_sequence');
  assert.equal(m.stop_sequence, 'there');
  assert.deepEqual(m.content, [{ type: 'text', text: 'user\nhello ' }]);
});

test('count_tokens of tool_use and tool_result blocks equals the OpenAI-shaped rendering', async () => {
  const anthropic = await served.client.messages.countTokens({
    model: MODEL,
    tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '21°C, sunny' }] },
    ],
  });
  const res = await fetch(`${served.server.url}/tokenize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'toolu_1', content: '21°C, sunny' },
      ],
    }),
  });
  const openai = (await res.json()) as { count: number };
  assert.equal(anthropic.input_tokens, openai.count);
});

test('count_tokens counts the templated prompt', async () => {
  const r = await served.client.messages.countTokens({ model: MODEL, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi 👋' }] });
  const expected = tok.encode('<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi 👋<|im_end|>\n<|im_start|>assistant\n', false).length;
  assert.equal(r.input_tokens, expected);
});

async function raw(body: unknown): Promise<{ status: number; json: { type: string; error: { type: string; message: string } } }> {
  const res = await fetch(`${served.server.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as { type: string; error: { type: string; message: string } } };
}

const BAD: [string, unknown, number, string, RegExp][] = [
  ['malformed JSON', '{"model":', 400, 'invalid_request_error', /invalid JSON/],
  ['max_tokens missing', { model: MODEL, messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request_error', /max_tokens: Field required/],
  ['messages empty', { model: MODEL, max_tokens: 5, messages: [] }, 400, 'invalid_request_error', /at least one message/],
  ['bad role', { model: MODEL, max_tokens: 5, messages: [{ role: 'system', content: 'x' }] }, 400, 'invalid_request_error', /role: must be "user" or "assistant"/],
  ['temperature above 1', { model: MODEL, max_tokens: 5, temperature: 1.5, messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request_error', /temperature/],
  ['image block without a source type', { model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] }, 400, 'invalid_request_error', /`messages\.0\.content\.0\.source\.type` must be "base64" or "url"/],
  ['image block for a model without image input', { model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] }] }, 400, 'invalid_request_error', /does not take image input/],
  ['unknown model', { model: 'nope', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, 404, 'not_found_error', /nope/],
  ['unknown field', { model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'x' }], frob: 1 }, 400, 'invalid_request_error', /Unsupported parameter\(s\): `frob`/],
];

for (const [name, body, status, type, message] of BAD) {
  test(`bad messages request (${name}) answers ${status} in Anthropic's error shape`, async () => {
    const r = await raw(body);
    assert.equal(r.status, status);
    assert.equal(r.json.type, 'error');
    assert.equal(r.json.error.type, type);
    assert.match(r.json.error.message, message);
    const ok = await served.client.messages.create({ model: MODEL, max_tokens: 3, messages: [{ role: 'user', content: 'still serving' }] });
    assert.equal(ok.type, 'message');
  });
}
