// Stop handling through the server with the echo engine: the native stop jail never
// emits a partial stop string, the stop ends the choice (and the engine request), and
// finish reasons, matched stops and usage follow vLLM's rules.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { Model } from '../src/native/core.js';

const tok = Model.load(QWEN3);
const TEXT = 'The answer is forty-two. END OF ANSWER and then some more text that must not appear.';

const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1'], (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

const raw = (extra: object) => ({ model: 'm', messages: [{ role: 'user', content: TEXT }], nvext: { use_raw_prompt: true, extra_fields: ['stop_reason'] }, ...extra }) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;

test('a stop string ends the choice before it, with finish_reason stop and the matched stop', async () => {
  const r = (await served.client.chat.completions.create(raw({ stop: ['END OF ANSWER'] }))) as OpenAI.ChatCompletion & { nvext: { stop_reason: unknown } };
  assert.equal(r.choices[0].message.content, 'The answer is forty-two. ');
  assert.equal(r.choices[0].finish_reason, 'stop');
  assert.equal(r.nvext.stop_reason, 'END OF ANSWER');
  assert.ok(r.usage!.completion_tokens < tok.encode(TEXT, false).length, 'usage counts only tokens up to the stop');
});

test('include_stop_str_in_output keeps the stop string', async () => {
  const r = await served.client.chat.completions.create(raw({ stop: 'END OF ANSWER', include_stop_str_in_output: true }));
  assert.equal(r.choices[0].message.content, 'The answer is forty-two. END OF ANSWER');
});

test('streaming never emits a partial stop string, and the stream ends at the stop', async () => {
  const stream = await served.client.chat.completions.create({ ...raw({ stop: ['END OF ANSWER', 'forty-three'] }), stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
  const pieces: string[] = [];
  let finish: string | null = null;
  for await (const c of stream) {
    if (c.choices[0]?.delta.content) pieces.push(c.choices[0].delta.content);
    if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
  }
  const text = pieces.join('');
  assert.equal(text, 'The answer is forty-two. ');
  assert.equal(finish, 'stop');
  for (const p of pieces) assert.ok(!/END|forty-thr/.test(p) || p.includes('forty-two'), `no piece of a stop string leaked: ${JSON.stringify(p)}`);
});

test('a stop string that never completes is released at the end', async () => {
  const r = await served.client.chat.completions.create(raw({ stop: ['some more text that never'] }));
  assert.equal(r.choices[0].message.content, TEXT);
  assert.equal(r.choices[0].finish_reason, 'stop');
});

test('an integer in stop is a stop token id', async () => {
  const ids = tok.encode(TEXT, false);
  const r = (await served.client.chat.completions.create(raw({ stop: [ids[3]] }))) as OpenAI.ChatCompletion & { nvext: { stop_reason: unknown } };
  assert.equal(r.choices[0].message.content, tok.decode(ids.subarray(0, 3), true));
  assert.equal(r.nvext.stop_reason, ids[3]);
});

test('the server keeps serving after stopped requests, and n>1 stops each choice', async () => {
  const r = await served.client.chat.completions.create(raw({ stop: ['forty'], n: 3, temperature: 1 }));
  assert.deepEqual(r.choices.map((c) => c.message.content), ['The answer is ', 'The answer is ', 'The answer is ']);
  assert.ok(r.choices.every((c) => c.finish_reason === 'stop'));
});

test('completions honour stop too', async () => {
  const r = await served.client.completions.create({ model: 'm', prompt: TEXT, stop: ['END'], max_tokens: 100 });
  assert.equal(r.choices[0].text, 'The answer is forty-two. ');
});

const BAD: [string, unknown, RegExp][] = [
  ['an empty stop string', { stop: '' }, /`stop` must not be an empty string/],
  ['an empty stop in a list', { stop: ['a', ''] }, /`stop\[1\]` must not be empty/],
  ['33 stop sequences', { stop: Array.from({ length: 33 }, (_, i) => `s${i}`) }, /at most 32/],
  ['a stop object', { stop: { a: 1 } }, /`stop` must be a string or an array/],
  ['a negative stop id', { stop: [-1] }, /`stop\[0\]` must be a non-empty string or a token id/],
];
for (const [name, extra, message] of BAD) {
  test(`${name} is a 400`, async () => {
    const res = await fetch(`${served.server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...(extra as object) }) });
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, message);
  });
}
