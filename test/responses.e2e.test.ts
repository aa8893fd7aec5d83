// POST /v1/responses with the real openai SDK against the real server and echo engines.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';

const MODEL = 'qwen3';
const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '1'], (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

// The echoed prompt ends at its first <|im_end|>, an EOS id of Qwen3.
const ECHO = 'system\nBe brief.';

test('a response object with output_text and usage', async () => {
  const r = await served.client.responses.create({ model: MODEL, instructions: 'Be brief.', input: 'Hi 👋' });
  assert.equal(r.object, 'response');
  assert.equal(r.status, 'completed');
  assert.match(r.id, /^resp_/);
  assert.equal(r.output_text, ECHO);
  assert.equal(r.output[0].type, 'message');
  assert.ok(r.usage);
  assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
  assert.equal(r.instructions, 'Be brief.');
});

test('max_output_tokens gives status incomplete with its reason', async () => {
  const r = await served.client.responses.create({ model: MODEL, input: 'a prompt long enough', max_output_tokens: 2 });
  assert.equal(r.status, 'incomplete');
  assert.deepEqual(r.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(r.usage!.output_tokens, 2);
});

test('input items: developer messages, text parts, function calls and their outputs are accepted', async () => {
  const r = await served.client.responses.create({
    model: MODEL,
    input: [
      { role: 'developer', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '21°C' },
    ],
    tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }],
  });
  assert.equal(r.status, 'completed');
  // The first segment of the echoed prompt is the system block: the developer message and the tools.
  assert.ok(r.output_text.startsWith('system\nBe brief.'), r.output_text.slice(0, 40));
  assert.ok(r.output_text.includes('"name": "get_weather"'));
});

test('streaming emits the Responses event sequence in order', async () => {
  const stream = await served.client.responses.create({ model: MODEL, instructions: 'Be brief.', input: 'Hi 👋', stream: true });
  const types: string[] = [];
  const seqs: number[] = [];
  let text = '';
  let final: OpenAI.Responses.Response | undefined;
  for await (const ev of stream) {
    types.push(ev.type);
    seqs.push(ev.sequence_number);
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.completed') final = ev.response;
  }
  assert.equal(text, ECHO);
  assert.deepEqual(types.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
  assert.deepEqual(types.slice(-4), ['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
  assert.deepEqual(seqs, seqs.map((_, i) => i), 'sequence numbers count up from 0');
  assert.equal(final?.status, 'completed');
});

const BAD: [string, unknown, RegExp][] = [
  ['input missing', { model: MODEL }, /`input` is required/],
  ['previous_response_id not a string', { model: MODEL, input: 'x', previous_response_id: 42 }, /previous_response_id/],
  ['unknown item type', { model: MODEL, input: [{ type: 'web_search_call' }] }, /not supported/],
  ['bad role', { model: MODEL, input: [{ role: 'tool', content: 'x' }] }, /role/],
  ['non-function tool', { model: MODEL, input: 'x', tools: [{ type: 'web_search' }] }, /only function tools/],
  ['max_output_tokens zero', { model: MODEL, input: 'x', max_output_tokens: 0 }, /max_output_tokens/],
];
for (const [name, body, message] of BAD) {
  test(`bad responses request (${name}) is a 400`, async () => {
    const res = await fetch(`${served.server.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(res.status, 400);
    const json = (await res.json()) as { error: { message: string } };
    assert.match(json.error.message, message);
    const ok = await served.client.responses.create({ model: MODEL, input: 'still serving', max_output_tokens: 3 });
    assert.equal(ok.object, 'response');
  });
}

test('include message.output_text.logprobs: one entry per output token with top_logprobs alternatives, unary, streamed and retrieved', async () => {
  const c = served.client;
  const body = { model: MODEL, input: 'Hi there, how are you?', max_output_tokens: 5, include: ['message.output_text.logprobs' as const], top_logprobs: 2 };
  const r = await c.responses.create(body);
  assert.equal(r.top_logprobs, 2);
  const part = (r.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
  const lps = part.logprobs!;
  assert.equal(lps.length, r.usage!.output_tokens, 'one entry per output token');
  // Token names keep special tokens (as on chat completions); the text skips them.
  const spelled = (l: { token: string }[]) => l.map((x) => x.token).join('').replaceAll('<|im_start|>', '');
  assert.equal(spelled(lps), part.text, 'the entries spell the text');
  for (const l of lps) {
    assert.ok(l.logprob <= 0 && Array.isArray(l.bytes));
    assert.equal(l.top_logprobs.length, 2);
  }
  // Streamed: each output_text delta carries the entries of its tokens; done carries them all.
  const deltas: { delta: string; logprobs: OpenAI.Responses.ResponseTextDeltaEvent.Logprob[] }[] = [];
  let done: OpenAI.Responses.ResponseTextDoneEvent | undefined;
  let completed: OpenAI.Responses.Response | undefined;
  for await (const ev of await c.responses.create({ ...body, stream: true })) {
    if (ev.type === 'response.output_text.delta') deltas.push({ delta: ev.delta, logprobs: ev.logprobs });
    if (ev.type === 'response.output_text.done') done = ev;
    if (ev.type === 'response.completed' || ev.type === 'response.incomplete') completed = ev.response;
  }
  assert.deepEqual(deltas.flatMap((d) => d.logprobs.map((l) => l.token)), lps.map((l) => l.token), 'the same tokens as the unary answer');
  for (const d of deltas) assert.equal(spelled(d.logprobs), d.delta, 'a delta carries its own tokens');
  assert.equal(done!.logprobs.length, lps.length);
  const stored = await c.responses.retrieve(completed!.id);
  assert.equal(((stored.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText).logprobs!.length, lps.length, 'kept with the stored response');
  // Without include: no entries; top_logprobs out of range: a 400 naming it.
  const plain = await c.responses.create({ model: MODEL, input: 'Hi there', max_output_tokens: 3 });
  assert.deepEqual(((plain.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText).logprobs, []);
  await assert.rejects(c.responses.create({ ...body, top_logprobs: 21 }), (e: unknown) => e instanceof OpenAI.BadRequestError && /top_logprobs/.test(e.message));
  assert.equal((await c.responses.create({ model: MODEL, input: 'still serving' })).status, 'completed');
});

