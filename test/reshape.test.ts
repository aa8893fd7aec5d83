// The Anthropic and Responses requests are reshaped into chat-template messages; these
// unit tests pin the exact messages and tools the native template receives.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readAnthropicRequest } from '../src/protocol/anthropic-request.js';
import { readResponsesRequest } from '../src/protocol/responses-request.js';
import type { TemplateBody } from '../src/protocol/template-body.js';

function template(p: TemplateBody): { messages: unknown; tools: unknown } {
  const json = JSON.parse(p.body.toString('utf8')) as { messages: unknown; tools?: unknown };
  // The spans point at exactly these two values.
  assert.deepEqual(JSON.parse(p.body.toString('utf8', p.messages.start, p.messages.end)), json.messages);
  if (p.tools) assert.deepEqual(JSON.parse(p.body.toString('utf8', p.tools.start, p.tools.end)), json.tools);
  return { messages: json.messages, tools: json.tools ?? null };
}

test('Anthropic: system, text, tool_use, tool_result and thinking blocks become template messages', () => {
  const body = Buffer.from(
    JSON.stringify({
      model: 'm',
      max_tokens: 10,
      system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Be kind.' }],
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object' } }],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Need the tool.', signature: 's' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '21°C' }] }, { type: 'text', text: 'Thanks!' }] },
      ],
    }),
  );
  const { messages, tools } = template(readAnthropicRequest(body, false).prompt);
  assert.deepEqual(messages, [
    { role: 'system', content: 'Be brief.\nBe kind.' },
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: 'Checking.', reasoning_content: 'Need the tool.', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'toolu_1', content: '21°C' },
    { role: 'user', content: 'Thanks!' },
  ]);
  assert.deepEqual(tools, [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } } }]);
  assert.deepEqual(Object.keys((tools as { function: object }[])[0].function), ['name', 'description', 'parameters'], "OpenAI's key order, as the template prints it");
});

test('Responses: instructions, developer role, parts, function calls and outputs become template messages', () => {
  const body = Buffer.from(
    JSON.stringify({
      model: 'm',
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'Use metric units.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris' }, { type: 'input_text', text: 'and Rome?' }] },
        { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'c2', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'c1', output: '21°C' },
        { type: 'function_call_output', call_id: 'c2', output: '25°C' },
      ],
      tools: [{ type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object' } }],
    }),
  );
  const { messages, tools } = template(readResponsesRequest(body, false).prompt);
  assert.deepEqual(messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'system', content: 'Use metric units.' },
    { role: 'user', content: 'Weather in Paris\nand Rome?' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: '21°C' },
    { role: 'tool', tool_call_id: 'c2', content: '25°C' },
  ]);
  assert.deepEqual(tools, [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, description: 'Weather' } }]);
});

test('Responses: a reasoning item, the assistant message and its function calls form one assistant turn', () => {
  const body = Buffer.from(
    JSON.stringify({
      model: 'm',
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'Need the tool.' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'c1', output: '21°C' },
      ],
    }),
  );
  const { messages } = template(readResponsesRequest(body, false).prompt);
  assert.deepEqual(messages, [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: 'Checking.', reasoning_content: 'Need the tool.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: '21°C' },
  ]);
  assert.throws(() => readResponsesRequest(Buffer.from(JSON.stringify({ model: 'm', input: [{ type: 'reasoning', content: [{ type: 'summary_text', text: 'x' }] }] })), false), /must be a reasoning_text part/);
});
