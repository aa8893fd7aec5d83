// POST /v1/completions through the real server and the openai SDK, with echo engines:
// every prompt form, batches, n, echo, usage, streaming.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { Model } from '../src/native/core.js';

const MODEL = 'qwen3';
const tok = Model.load(QWEN3);

const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo'], (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

const TEXT = 'Once upon a time, 很久以前 🐉';

test('a string prompt comes back through the echo engine, with usage', async () => {
  const r = await served.client.completions.create({ model: MODEL, prompt: TEXT, max_tokens: 100 });
  assert.equal(r.object, 'text_completion');
  assert.match(r.id, /^cmpl-/);
  assert.equal(r.choices[0].text, TEXT);
  assert.equal(r.choices[0].finish_reason, 'stop');
  const n = tok.encode(TEXT, true).length;
  assert.deepEqual(r.usage, { prompt_tokens: n, completion_tokens: n, total_tokens: 2 * n, prompt_tokens_details: { cached_tokens: 0 } });
});

test('max_tokens defaults to 16 for completions', async () => {
  const long = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
  const r = await served.client.completions.create({ model: MODEL, prompt: long });
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.equal(r.usage!.completion_tokens, 16);
});

test('token ids and arrays of token ids are accepted as prompts', async () => {
  const ids = Array.from(tok.encode(TEXT, false));
  const one = await served.client.completions.create({ model: MODEL, prompt: ids, max_tokens: 100 });
  assert.equal(one.choices[0].text, TEXT);
  const two = await served.client.completions.create({ model: MODEL, prompt: [ids, ids.slice(0, 3)], max_tokens: 100 });
  assert.equal(two.choices.length, 2);
  assert.equal(two.choices[0].text, TEXT);
  assert.equal(two.choices[1].text, tok.decode(Uint32Array.from(ids.slice(0, 3)), true));
});

test('a batch of string prompts with n=2 gives prompt-major choice indexes', async () => {
  const r = await served.client.completions.create({ model: MODEL, prompt: ['alpha', 'beta gamma'], n: 2, temperature: 1, max_tokens: 50 });
  assert.deepEqual(r.choices.map((c) => [c.index, c.text]), [[0, 'alpha'], [1, 'alpha'], [2, 'beta gamma'], [3, 'beta gamma']]);
  const pa = tok.encode('alpha', true).length;
  const pb = tok.encode('beta gamma', true).length;
  assert.equal(r.usage!.prompt_tokens, pa + pb);
  assert.equal(r.usage!.completion_tokens, 2 * pa + 2 * pb);
});

test('echo prepends the prompt to the completion', async () => {
  const r = await served.client.completions.create({ model: MODEL, prompt: 'ping', echo: true, max_tokens: 10 });
  assert.equal(r.choices[0].text, 'pingping');
});

test('streaming batches arrive per choice and end with a usage chunk', async () => {
  const stream = await served.client.completions.create({ model: MODEL, prompt: ['first prompt', 'second'], stream: true, stream_options: { include_usage: true }, max_tokens: 50 });
  const texts = ['', ''];
  const finish: (string | null)[] = [null, null];
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      texts[c.index] += c.text;
      if (c.finish_reason) finish[c.index] = c.finish_reason;
    }
  }
  assert.deepEqual(texts, ['first prompt', 'second']);
  assert.deepEqual(finish, ['stop', 'stop']);
  assert.ok(usage && usage.total_tokens === usage.prompt_tokens + usage.completion_tokens);
});

test('continuous_usage_stats puts usage on every chunk', async () => {
  const res = await fetch(`${served.server.url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, prompt: 'a b c d', stream: true, stream_options: { continuous_usage_stats: true } }),
  });
  const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: {'));
  assert.ok(events.length >= 2);
  let last = 0;
  for (const e of events) {
    const u = JSON.parse(e.slice(6)).usage;
    assert.ok(u, 'every chunk has usage');
    assert.ok(u.completion_tokens >= last, 'completion tokens only grow');
    last = u.completion_tokens;
  }
});

const BAD: [string, object, RegExp][] = [
  ['prompt missing', { model: MODEL }, /`prompt` is required/],
  ['prompt empty string', { model: MODEL, prompt: '' }, /`prompt` must not be an empty string/],
  ['prompt empty array', { model: MODEL, prompt: [] }, /`prompt` must not be empty/],
  ['prompt of objects', { model: MODEL, prompt: [{ a: 1 }] }, /`prompt\[0\]` must be a string or an array of token ids/],
  ['negative token id', { model: MODEL, prompt: [1, -2] }, /non-negative integer token ids/],
  ['token id beyond the vocabulary', { model: MODEL, prompt: [1, 10_000_000] }, /out of the vocabulary/],
  ['prompt a number', { model: MODEL, prompt: 5 }, /`prompt` must be a string/],
  ['unsupported suffix', { model: MODEL, prompt: 'x', suffix: 'y' }, /Unsupported parameter\(s\): `suffix`/],
];

for (const [name, body, message] of BAD) {
  test(`bad completions request (${name}) is a 400`, async () => {
    const res = await fetch(`${served.server.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(res.status, 400);
    const json = (await res.json()) as { error: { message: string; type: string } };
    assert.equal(json.error.type, 'invalid_request_error');
    assert.match(json.error.message, message);
    const ok = await served.client.completions.create({ model: MODEL, prompt: 'ok', max_tokens: 5 });
    assert.equal(ok.choices[0].text, 'ok');
  });
}
