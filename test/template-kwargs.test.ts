// chat_template_kwargs are read once, by the request reader: the template gets their text
// (thinking values normalised) and the parsing plan gets the reasoning effort among them
// from the same read (PRE.2), with the kwargs' own reasoning_effort winning over the field.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readChatRequest } from '../src/protocol/chat-request.js';

function read(extra: Record<string, unknown>): { templateKwargs: string | null; reasoningEffort: string | null } {
  const body = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra }));
  const r = readChatRequest(body, false, () => '');
  return { templateKwargs: r.templateKwargs, reasoningEffort: r.reasoningEffort };
}

test('the reasoning effort the plan gets: the kwargs\' own, else the field, else none', () => {
  assert.deepEqual(read({}), { templateKwargs: null, reasoningEffort: null });
  assert.deepEqual(read({ reasoning_effort: 'high' }), { templateKwargs: '{"reasoning_effort":"high"}', reasoningEffort: 'high' });
  assert.deepEqual(read({ chat_template_kwargs: { reasoning_effort: 'low' } }), { templateKwargs: '{"reasoning_effort":"low"}', reasoningEffort: 'low' });
  const both = read({ chat_template_kwargs: { reasoning_effort: 'low' }, reasoning_effort: 'high' });
  assert.equal(both.reasoningEffort, 'low', 'the kwargs name it: the template and the plan see theirs');
  assert.equal(JSON.parse(both.templateKwargs!).reasoning_effort, 'low');
  const notString = read({ chat_template_args: { reasoning_effort: 3 }, reasoning_effort: 'high' });
  assert.equal(notString.reasoningEffort, null, 'a non-string effort in the kwargs is no effort');
  assert.equal(JSON.parse(notString.templateKwargs!).reasoning_effort, 3);
});

test('thinking values in the kwargs are normalised in the text the plan and the template share', () => {
  const r = read({ chat_template_kwargs: { enable_thinking: 'off', reasoning_effort: 'medium' } });
  assert.deepEqual(JSON.parse(r.templateKwargs!), { enable_thinking: false, reasoning_effort: 'medium' });
  assert.equal(r.reasoningEffort, 'medium');
  const t = read({ thinking: { type: 'disabled' } });
  assert.deepEqual(JSON.parse(t.templateKwargs!), { thinking: false, enable_thinking: false });
  assert.equal(t.reasoningEffort, null);
});

test('bad kwargs are still a 400 naming the field', () => {
  assert.throws(() => read({ chat_template_kwargs: { chat_template: 'x' } }), (e: any) => e.status === 400 && e.param === 'chat_template_kwargs');
  assert.throws(() => read({ chat_template_kwargs: {}, chat_template_args: {} }), (e: any) => e.status === 400 && e.param === 'chat_template_args');
});
