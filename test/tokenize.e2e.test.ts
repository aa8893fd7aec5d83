// POST /tokenize and /detokenize against the real server and the real Qwen3 tokenizer.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { Model } from '../src/native/core.js';

const tok = Model.load(QWEN3);

const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'qwen3', '--mock', 'echo', '--mock-workers', '1']);

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${served.server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

test('tokenize a prompt', async () => {
  const { status, json } = await post('/tokenize', { model: 'qwen3', prompt: 'Hello 世界', return_token_strs: true });
  assert.equal(status, 200);
  assert.deepEqual(json.tokens, Array.from(tok.encode('Hello 世界', true)));
  assert.equal(json.count, (json.tokens as number[]).length);
  assert.equal((json.token_strs as string[]).length, json.count);
});

test('tokenize chat messages applies the template', async () => {
  const { status, json } = await post('/tokenize', { model: 'qwen3', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(status, 200);
  assert.equal(tok.decode(Uint32Array.from(json.tokens as number[]), false), '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');
});

test('detokenize turns ids back into text', async () => {
  const ids = Array.from(tok.encode('round trip ✓', false));
  const { status, json } = await post('/detokenize', { model: 'qwen3', tokens: ids });
  assert.equal(status, 200);
  assert.equal(json.prompt, 'round trip ✓');
});

const BAD: [string, string, unknown, RegExp, number?][] = [
  ['/tokenize', 'neither prompt nor messages', { model: 'qwen3' }, /exactly one of `prompt` or `messages`/],
  ['/tokenize', 'both prompt and messages', { model: 'qwen3', prompt: 'a', messages: [{ role: 'user', content: 'b' }] }, /exactly one/],
  ['/tokenize', 'unknown model', { model: 'nope', prompt: 'a' }, /does not exist/, 404],
  ['/detokenize', 'tokens missing', { model: 'qwen3' }, /`tokens` is required/],
  ['/detokenize', 'token out of vocabulary', { model: 'qwen3', tokens: [99_999_999] }, /out of the vocabulary/],
  ['/detokenize', 'token not an integer', { model: 'qwen3', tokens: ['a'] }, /non-negative integer/],
];
for (const [path, name, body, message, status = 400] of BAD) {
  test(`${path} with ${name} is a ${status}`, async () => {
    const r = await post(path, body);
    assert.equal(r.status, status);
    assert.match((r.json.error as { message: string }).message, message);
  });
}
