// Unit tests of the logprob path: the book the one loop records engine events in, which
// hands each writer delta its own tokens, and the two OpenAI projections.

import { test } from 'node:test';
import { bestFirst } from '../src/engine/generate-stream.js';
import { vllmTopCount } from '../src/engine/vllm-generate-wire.js';
import assert from 'node:assert/strict';

import type { EngineEvent } from '../src/engine/types.js';
import { LogprobBook } from '../src/pipeline/logprobs.js';
import { chatDeltaLogprobs, chatLogprobContent, completionLogprobs, tokenNamer } from '../src/protocol/logprobs-response.js';
import { escapeRegex } from '../src/protocol/constraint.js';
import { thinkingEnabled } from '../src/protocol/thinking.js';

const usage = { promptTokens: 3, completionTokens: 0, cachedTokens: 0 };

test('the book records per choice and take() drains only what arrived so far', () => {
  const book = new LogprobBook();
  const events: EngineEvent[] = [
    { kind: 'chunk', chunk: { ...usage, index: 0, tokenIds: [5, 6], logprobs: { logprobs: [-1, -2], top: [{ tokenIds: [5, 9], logprobs: [-1, -3] }, { tokenIds: [6], logprobs: [-2] }] } } },
    { kind: 'chunk', chunk: { ...usage, index: 1, tokenIds: [7], logprobs: { logprobs: [-0.5] } } },
    { kind: 'chunk', chunk: { ...usage, index: 0, tokenIds: [8] } },
  ];
  book.record(events[0]);
  assert.deepEqual(book.take(0), [
    { id: 5, logprob: -1, top: [{ id: 5, logprob: -1 }, { id: 9, logprob: -3 }] },
    { id: 6, logprob: -2, top: [{ id: 6, logprob: -2 }] },
  ]);
  assert.deepEqual(book.take(0), [], 'drained');
  assert.deepEqual(book.take(1), [], 'choice 1 has not arrived yet');
  book.record(events[1]);
  assert.deepEqual(book.take(1), [{ id: 7, logprob: -0.5, top: [] }]);
  book.record(events[2]);
  // An engine that sent no logprobs for a token: -9999, vLLM's stand-in for -inf.
  assert.deepEqual(book.take(0), [{ id: 8, logprob: -9999, top: [] }]);
});

test('non-stream done events carry their logprobs for every output id', () => {
  const book = new LogprobBook();
  book.record({ kind: 'done', done: { ...usage, index: 0, finishReason: 'stop', outputIds: [1, 2], logprobs: { logprobs: [-1, -2] } } });
  assert.deepEqual(book.take(0).map((t) => t.logprob), [-1, -2]);
});

test('chat projection: token text, bytes, top_logprobs cut to k, -inf as -9999', () => {
  const names: Record<number, string> = { 1: 'é', 2: ' b', 3: 'c' };
  const name = tokenNamer((id) => names[id], false);
  const out = chatLogprobContent([{ id: 1, logprob: -Infinity, top: [{ id: 1, logprob: -1 }, { id: 2, logprob: -2 }, { id: 3, logprob: -3 }] }], name, 2);
  assert.deepEqual(out, [{
    token: 'é', logprob: -9999, bytes: [0xc3, 0xa9],
    top_logprobs: [{ token: 'é', logprob: -1, bytes: [0xc3, 0xa9] }, { token: ' b', logprob: -2, bytes: [0x20, 0x62] }],
  }]);
  const ids = tokenNamer(() => assert.fail('not decoded'), true);
  assert.equal(chatLogprobContent([{ id: 42, logprob: -1, top: [] }], ids, 0)[0].token, 'token_id:42');
});

test('the streamed chat JSON is the unary projection, byte for byte once parsed (escapes included)', () => {
  const names: Record<number, string> = { 1: 'say "hi"\n', 2: '\\', 3: '\u0000é' };
  const name = tokenNamer((id) => names[id], false, {});
  const list = [
    { id: 1, logprob: -0.25, top: [{ id: 2, logprob: -1 }, { id: 3, logprob: -Infinity }] },
    { id: 3, logprob: -2, top: [] },
  ];
  for (const k of [0, 1, 2, 5]) assert.deepEqual(JSON.parse(chatDeltaLogprobs(list, name, k)), { content: chatLogprobContent(list, name, k) });
});

test('decoded token texts are shared by the requests of one model', () => {
  const owner = {};
  let decodes = 0;
  const decode = (id: number) => (decodes++, `t${id}`);
  tokenNamer(decode, false, owner).text(7);
  tokenNamer(decode, false, owner).text(7);
  assert.equal(decodes, 1);
  tokenNamer(decode, false, {}).text(7);
  assert.equal(decodes, 2, 'another model has its own texts');
});

test('completions projection: offsets advance by code points across deltas; the sampled token joins top_logprobs', () => {
  const names: Record<number, string> = { 1: '😀', 2: 'ab', 3: 'x' };
  const name = tokenNamer((id) => names[id], false);
  const offset = { at: 4 };
  const a = completionLogprobs([{ id: 1, logprob: -1, top: [{ id: 3, logprob: -0.5 }] }], name, 1, offset);
  const b = completionLogprobs([{ id: 2, logprob: -2, top: [] }], name, 0, offset);
  assert.deepEqual(a, { tokens: ['😀'], token_logprobs: [-1], top_logprobs: [{ x: -0.5, '😀': -1 }], text_offset: [4] });
  assert.deepEqual(b, { tokens: ['ab'], token_logprobs: [-2], top_logprobs: [{ ab: -2 }], text_offset: [5] });
  assert.equal(offset.at, 7);
});

test('guided_choice escaping: regex metacharacters only', () => {
  assert.equal(escapeRegex('a.b(c)[d]{e}|f*g+h?i^j$k\\l'), 'a\\.b\\(c\\)\\[d\\]\\{e\\}\\|f\\*g\\+h\\?i\\^j\\$k\\\\l');
  assert.equal(escapeRegex('plain text-1'), 'plain text-1');
});

test('spec 003 truthiness of thinking arguments', () => {
  for (const v of [true, 'true', ' TRUE ', '1', 'yes', 'on', 1, -2, 0.5]) assert.equal(thinkingEnabled(v), true, JSON.stringify(v));
  for (const v of [false, 'false', '0', 'no', 'off', '', 0, null, {}, []]) assert.equal(thinkingEnabled(v), false, JSON.stringify(v));
});

test('top alternatives from the engine come out most likely first (vLLM sends the sampled token first)', () => {
  // vLLM's servicer order for k=2 asked as 3: the sampled token (-2.5), then the best two.
  const r = bestFirst([7, 3, 9], [-2.5, -0.5, -1.25]);
  assert.deepEqual(r, { tokenIds: [3, 9, 7], logprobs: [-0.5, -1.25, -2.5] });
  const sorted = { tokenIds: [1, 2], values: [-0.1, -0.2] };
  assert.equal(bestFirst(sorted.tokenIds, sorted.values).logprobs, sorted.values, 'an ordered list is used as it is');
  assert.equal(vllmTopCount(2), 3);
  assert.equal(vllmTopCount(0), 0);
  assert.equal(vllmTopCount(20), 20, 'vLLM refuses more than its --max-logprobs (20)');
});
