// The Anthropic content-block and Responses output-item builders as state machines:
// the same steps give the same blocks / items whether streaming or not, a change of kind
// closes the open block / item, argument fragments concatenate, ids stay distinct.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { AnthropicContent, thinkingSignature } from '../src/protocol/anthropic-content.js';
import { ResponseOutput } from '../src/protocol/responses-output.js';
import { ResponsesStreamWriter } from '../src/protocol/responses-response.js';
import type { ResponsesRequest } from '../src/protocol/responses-request.js';

type Step = ['text' | 'reasoning' | 'args', string] | ['tool', string, string];

const STEPS: Step[] = [
  ['reasoning', 'Think'],
  ['reasoning', 'ing.'],
  ['text', 'Hi'],
  ['tool', 'call_1', 'f'],
  ['args', '{"a"'],
  ['args', ': 1}'],
  ['tool', 'call_2', 'g'],
  ['text', 'after'],
];

function runAnthropic(stream: boolean): { c: AnthropicContent; sse: string } {
  const c = new AnthropicContent(stream);
  let sse = '';
  for (const s of STEPS) {
    if (s[0] === 'text') sse += c.text(s[1]);
    else if (s[0] === 'reasoning') sse += c.thinking(s[1]);
    else if (s[0] === 'tool') sse += c.toolStart(s[1], s[2]);
    else sse += c.toolArgs(s[1]);
  }
  return { c, sse: sse + c.finish() };
}

function events(sse: string): { event: string; data: Record<string, unknown> }[] {
  return sse
    .split('\n\n')
    .filter(Boolean)
    .map((b) => {
      const [e, d] = b.split('\n');
      return { event: e.slice('event: '.length), data: JSON.parse(d.slice('data: '.length)) as Record<string, unknown> };
    });
}

test('Anthropic: blocks in arrival order, same with and without streaming', () => {
  const expected = [
    { type: 'thinking', thinking: 'Thinking.', signature: `portico-sha256:${createHash('sha256').update('Thinking.').digest('hex')}` },
    { type: 'text', text: 'Hi' },
    { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
    { type: 'tool_use', id: 'call_2', name: 'g', input: {} },
    { type: 'text', text: 'after' },
  ];
  const unary = runAnthropic(false);
  assert.equal(unary.sse, '');
  assert.deepEqual(unary.c.content, expected);
  const streamed = runAnthropic(true);
  assert.deepEqual(streamed.c.content, expected);
  assert.equal(streamed.c.toolUses, 2);
});

test('Anthropic: the event sequence, indexes, the signature before the stop of a thinking block', () => {
  const evs = events(runAnthropic(true).sse);
  const summary = evs.map((e) => {
    const d = e.data as { index?: number; delta?: { type: string }; content_block?: { type: string } };
    if (e.event === 'content_block_start') return `start ${d.index} ${d.content_block!.type}`;
    if (e.event === 'content_block_delta') return `delta ${d.index} ${d.delta!.type}`;
    if (e.event === 'content_block_stop') return `stop ${d.index}`;
    return e.event;
  });
  assert.deepEqual(summary, [
    'start 0 thinking',
    'ping',
    'delta 0 thinking_delta',
    'delta 0 thinking_delta',
    'delta 0 signature_delta',
    'stop 0',
    'start 1 text',
    'delta 1 text_delta',
    'stop 1',
    'start 2 tool_use',
    'delta 2 input_json_delta',
    'delta 2 input_json_delta',
    'stop 2',
    'start 3 tool_use',
    'stop 3',
    'start 4 text',
    'delta 4 text_delta',
    'stop 4',
  ]);
  assert.deepEqual(evs[9].data.content_block, { type: 'tool_use', id: 'call_1', name: 'f', input: {} });
  assert.equal((evs[4].data.delta as { signature: string }).signature, thinkingSignature('Thinking.'));
});

test('Anthropic: no output is one empty text block; arguments that are not an object are kept under _raw', () => {
  const empty = new AnthropicContent(true);
  assert.deepEqual(events(empty.finish()).map((e) => e.event), ['content_block_start', 'ping', 'content_block_stop']);
  assert.deepEqual(empty.content, [{ type: 'text', text: '' }]);
  const odd = new AnthropicContent(false);
  odd.toolStart('c', 'f');
  odd.toolArgs('[1, 2]');
  odd.finish();
  assert.deepEqual(odd.content, [{ type: 'tool_use', id: 'c', name: 'f', input: { _raw: '[1, 2]' } }]);
  assert.equal(new AnthropicContent(true).toolArgs('{}'), '', 'arguments without an open tool_use are dropped');
});

function runResponses(stream: boolean, incomplete = false): { o: ResponseOutput; events: { type: string; sequence_number: number; [k: string]: unknown }[] } {
  const w = stream ? new ResponsesStreamWriter({ id: 'resp_abc', hex: 'abc', createdAt: 0, req: {} as ResponsesRequest }) : null;
  const o = new ResponseOutput('abc', w);
  let out = '';
  for (const s of STEPS) {
    if (s[0] === 'text') out += o.text(s[1]);
    else if (s[0] === 'reasoning') out += o.reasoning(s[1]);
    else if (s[0] === 'tool') out += o.toolStart(s[1], s[2]);
    else out += o.toolArgs(s[1]);
  }
  out += o.finish(incomplete);
  const evs = out.split('\n\n').filter(Boolean).map((block) => {
    const [name, data] = block.split('\n');
    const e = JSON.parse(data.slice('data: '.length)) as { type: string; sequence_number: number };
    assert.equal(name, `event: ${e.type}`);
    return e;
  });
  assert.deepEqual(evs.map((e) => e.sequence_number), evs.map((_, i) => i));
  return { o, events: evs };
}

test('Responses: items in arrival order with distinct ids, same with and without streaming', () => {
  const expected = [
    { id: 'rs_abc', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'Thinking.' }], encrypted_content: null, status: 'completed' },
    { id: 'msg_abc', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi', annotations: [], logprobs: [] }] },
    { id: 'fc_abc', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a": 1}', status: 'completed' },
    { id: 'fc_abc_1', type: 'function_call', call_id: 'call_2', name: 'g', arguments: '', status: 'completed' },
    { id: 'msg_abc_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'after', annotations: [], logprobs: [] }] },
  ];
  const unary = runResponses(false);
  assert.deepEqual(unary.events, []);
  assert.deepEqual(unary.o.output, expected);
  assert.deepEqual(runResponses(true).o.output, expected);
  assert.equal(unary.o.functionCalls, 2);
});

test('Responses: every item opens with output_item.added and closes with output_item.done carrying the final item', () => {
  const { events: evs } = runResponses(true);
  const added = evs.filter((e) => e.type === 'response.output_item.added');
  const done = evs.filter((e) => e.type === 'response.output_item.done');
  assert.deepEqual(added.map((e) => (e.item as { status: string }).status), ['in_progress', 'in_progress', 'in_progress', 'in_progress', 'in_progress']);
  assert.deepEqual(done.map((e) => e.output_index), [0, 1, 2, 3, 4]);
  const argsDone = evs.find((e) => e.type === 'response.function_call_arguments.done')!;
  assert.deepEqual([argsDone.item_id, argsDone.name, argsDone.arguments], ['fc_abc', 'f', '{"a": 1}']);
  assert.deepEqual(
    evs.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta),
    ['{"a"', ': 1}'],
  );
  assert.equal(evs.find((e) => e.type === 'response.reasoning_text.done')!.text, 'Thinking.');
});

test('Responses: max_output_tokens marks only the item open at the end incomplete', () => {
  const { o } = runResponses(true, true);
  assert.deepEqual(o.output.map((i) => i.status), ['completed', 'completed', 'completed', 'completed', 'incomplete']);
});
