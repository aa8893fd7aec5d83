// The native core through its N-API surface, with the real Qwen3 tokenizer: what the
// request path relies on (spans in, ids out, streaming text never split mid-character).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Model, Detokenizer } from '../src/native/core.js';
import { QWEN3 } from './helpers/portico.js';

const model = Model.load(QWEN3);
const TEXTS = ['plain ASCII text.', '中文和日本語のテキスト', 'emoji 👨‍👩‍👧‍👦 🇫🇷 🦀', 'code: fn main() { println!("hi\\n"); }'];

test('model info comes from the folder', () => {
  const info = model.info();
  assert.ok(info.eosTokenIds.includes(151645), 'Qwen3 ends turns with <|im_end|> (151645)');
  assert.ok(info.vocabSize > 150_000);
  assert.equal(info.hasChatTemplate, true);
});

test('encode then decode gives the text back', () => {
  for (const t of TEXTS) assert.equal(model.decode(model.encode(t, false), false), t);
});

test('the detokenizer streams exactly the full decode, one token at a time, with no replacement chars', () => {
  for (const t of TEXTS) {
    const ids = model.encode(t, false);
    const d = new Detokenizer(model, true);
    let out = '';
    for (const id of ids) {
      const piece = d.push(Uint32Array.of(id));
      assert.ok(!piece.includes('\uFFFD'), `no half character in ${JSON.stringify(piece)}`);
      out += piece;
    }
    out += d.finish();
    assert.equal(out, t);
  }
});

test('encodeChat reads messages from a span of the body', () => {
  const prefix = '{"model":"m","messages":';
  const messages = '[{"role":"user","content":"Hi"}]';
  const body = Buffer.from(`${prefix}${messages}}`);
  const ids = model.encodeChat(body, prefix.length, prefix.length + messages.length, -1, -1, true, null);
  assert.equal(model.decode(ids, false), '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
});

test('encodeChatAsync gives the same ids as encodeChat', async () => {
  const messages = Buffer.from(JSON.stringify([{ role: 'user', content: 'long '.repeat(2000) }]));
  const sync = model.encodeChat(messages, 0, messages.length, -1, -1, true, '{"enable_thinking":false}');
  const async_ = await model.encodeChatAsync(messages, 0, messages.length, -1, -1, true, '{"enable_thinking":false}');
  assert.deepEqual(async_, sync);
});

test('a bad messages span is a client error (InvalidArg) with a position', () => {
  const body = Buffer.from('[{"role":"user","content":]');
  assert.throws(
    () => model.encodeChat(body, 0, body.length, -1, -1, true, null),
    (err: Error & { code?: string }) => err.code === 'InvalidArg' && /line 1 column \d+/.test(err.message),
  );
});

test('a folder that is not a model is a clear error naming it', () => {
  assert.throws(() => Model.load('/nonexistent/dir'), /not a model folder: \/nonexistent\/dir/);
});
