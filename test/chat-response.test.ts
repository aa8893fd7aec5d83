// The unary chat.completion body is written as text for speed: it must be byte for byte
// what JSON.stringify gives for the documented object form, for every shape a choice can
// take (plain text, reasoning, tool calls with and without content, logprobs, several
// choices, cached-token usage, a response nvext, text that needs escaping).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chatCompletion, usageOf, type ChatChoice, type Usage } from '../src/protocol/chat-response.js';

/** The object form of the body, as the OpenAI API documents it. */
function reference(id: string, model: string, created: number, choices: ChatChoice[], usage: Usage, nvext: Record<string, unknown> | null): string {
  return JSON.stringify({
    id,
    object: 'chat.completion',
    created,
    model,
    choices: choices.map((c) => ({
      index: c.index,
      message: {
        role: 'assistant',
        content: c.content === '' && c.toolCalls.length > 0 ? null : c.content,
        ...(c.reasoning ? { reasoning_content: c.reasoning } : {}),
        ...(c.toolCalls.length > 0 ? { tool_calls: c.toolCalls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } })) } : {}),
      },
      logprobs: c.logprobs ? { content: c.logprobs } : null,
      finish_reason: c.finishReason,
    })),
    usage,
    ...(nvext ? { nvext } : {}),
  });
}

const choice = (over: Partial<ChatChoice>): ChatChoice => ({ index: 0, content: '', reasoning: '', toolCalls: [], finishReason: 'stop', ...over });

const CASES: [string, ChatChoice[], Usage, Record<string, unknown> | null][] = [
  ['plain text', [choice({ content: 'Hello there' })], usageOf(11, 1, 0), null],
  ['empty content, no tools', [choice({ finishReason: 'length' })], usageOf(3, 0, 0), null],
  ['text needing escapes', [choice({ content: 'a "q" \\ \n\t\u0001 é 😀 \u2028' })], usageOf(1, 2, 0), null],
  ['reasoning and content', [choice({ content: 'ok', reasoning: 'thinking "hard"' })], usageOf(5, 9, 2), null],
  [
    'tool calls only (content null)',
    [choice({ toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"a": 1}' }, { id: 'call_2', name: 'g', arguments: '' }], finishReason: 'tool_calls' })],
    usageOf(20, 7, 0),
    null,
  ],
  ['tool call with content', [choice({ content: 'let me', toolCalls: [{ id: 'c', name: 'h', arguments: '{}' }], finishReason: 'tool_calls' })], usageOf(2, 2, 0), null],
  ['logprobs', [choice({ content: 'x', logprobs: [{ token: 'x', logprob: -0.5, bytes: [120], top_logprobs: [] }] })], usageOf(1, 1, 0), null],
  ['several choices', [choice({ content: 'a' }), choice({ index: 1, content: 'b', finishReason: 'length' }), choice({ index: 2, reasoning: 'r' })], usageOf(4, 3, 1), null],
  ['response nvext', [choice({ content: 'z' })], usageOf(1, 1, 0), { worker_id: { decode_worker_id: 3 }, stop_reason: null, timing: { queue_ms: 0.125, ttft_ms: null } }],
  ['no choices', [], usageOf(0, 0, 0), null],
];

for (const [name, choices, usage, nvext] of CASES) {
  test(`chatCompletion body equals JSON.stringify of its object form: ${name}`, () => {
    const id = 'chatcmpl-0123abc';
    const got = chatCompletion(id, 'Qwen/Qwen3 "0.6B"', 1764500000, choices, usage, nvext);
    assert.equal(got, reference(id, 'Qwen/Qwen3 "0.6B"', 1764500000, choices, usage, nvext));
    JSON.parse(got);
  });
}
