// Anthropic /v1/messages with the model's parsers: reasoning as `thinking` blocks (with a
// signature), tool calls as `tool_use` blocks, Anthropic's streaming block sequence, the
// tool_choice mapping and its refusals. The echo engine returns the text sent
// (nvext.use_raw_prompt), split into tokens by the real Qwen3 tokenizer.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { startPortico, QWEN3 } from './helpers/portico.js';
import { useParserServer, REASONING, OUTPUT } from './helpers/parser-server.js';

const served = useParserServer((url) => new Anthropic({ baseURL: url, apiKey: 'unused', maxRetries: 0 }));

const TOOLS: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } } }];
const SIGNATURE = `portico-sha256:${createHash('sha256').update(REASONING).digest('hex')}`;

function params(content: string, extra: object = {}): Anthropic.MessageCreateParamsNonStreaming {
  return { model: 'm', max_tokens: 400, tools: TOOLS, messages: [{ role: 'user', content }], nvext: { use_raw_prompt: true }, ...extra } as Anthropic.MessageCreateParamsNonStreaming;
}

type Block = Anthropic.ContentBlock;

function shape(blocks: Block[]): unknown[] {
  return blocks.map((b) => (b.type === 'tool_use' ? { type: b.type, name: b.name, input: b.input } : b));
}

const EXPECTED = [
  { type: 'thinking', thinking: REASONING, signature: SIGNATURE },
  { type: 'text', text: 'Let me check.' },
  { type: 'tool_use', name: 'get_weather', input: { city: 'Paris', days: 3 } },
  { type: 'tool_use', name: 'get_weather', input: { city: 'Rome' } },
];

test('thinking, text and parallel tool_use blocks, stop_reason tool_use (non-streaming)', async () => {
  const m = await served.client.messages.create(params(OUTPUT));
  assert.deepEqual(shape(m.content), EXPECTED);
  const ids = m.content.filter((b) => b.type === 'tool_use').map((b) => (b as Anthropic.ToolUseBlock).id);
  assert.equal(new Set(ids).size, 2, 'distinct tool_use ids');
  assert.equal(m.stop_reason, 'tool_use');
});

test('messages.stream: the block event sequence, and the SDK assembles the same blocks', async () => {
  const stream = served.client.messages.stream(params(OUTPUT) as Anthropic.MessageStreamParams);
  const seq: string[] = [];
  let thinking = '';
  // Arguments may arrive in several fragments per call: concatenate per block.
  const json = new Map<number, string>();
  stream.on('streamEvent', (e) => {
    if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') json.set(e.index, (json.get(e.index) ?? '') + e.delta.partial_json);
    if (e.type === 'content_block_start') seq.push(`start:${e.content_block.type}`);
    else if (e.type === 'content_block_delta') {
      const last = seq.at(-1);
      if (last !== e.delta.type) seq.push(e.delta.type);
    } else if (e.type === 'content_block_stop') seq.push('stop');
    else if (e.type === 'message_delta') seq.push(`message_delta:${e.delta.stop_reason}`);
    else seq.push(e.type);
  });
  stream.on('thinking', (delta) => (thinking += delta));
  const m = await stream.finalMessage();
  assert.deepEqual(seq, [
    'message_start',
    'start:thinking',
    'thinking_delta',
    'signature_delta',
    'stop',
    'start:text',
    'text_delta',
    'stop',
    'start:tool_use',
    'input_json_delta',
    'stop',
    'start:tool_use',
    'input_json_delta',
    'stop',
    'message_delta:tool_use',
    'message_stop',
  ]);
  assert.equal(thinking, REASONING);
  assert.deepEqual([...json.entries()].map(([i, j]) => [i, JSON.parse(j)]), [[2, { city: 'Paris', days: 3 }], [3, { city: 'Rome' }]]);
  assert.deepEqual(shape(m.content), EXPECTED);
  assert.equal(m.stop_reason, 'tool_use');
});

test('only reasoning and text: no tool_use, stop_reason end_turn', async () => {
  const m = await served.client.messages.create(params('<think>hmm</think>Hello.'));
  assert.deepEqual(m.content, [
    { type: 'thinking', thinking: 'hmm', signature: `portico-sha256:${createHash('sha256').update('hmm').digest('hex')}` },
    { type: 'text', text: 'Hello.' },
  ]);
  assert.equal(m.stop_reason, 'end_turn');
});

test('without tools in the request, tool markup stays text', async () => {
  const m = await served.client.messages.create({ ...params('Plain <tool_call>{}</tool_call> text'), tools: undefined });
  assert.deepEqual(m.content, [{ type: 'text', text: 'Plain <tool_call>{}</tool_call> text' }]);
  assert.equal(m.stop_reason, 'end_turn');
});

test('tool_choice none: the tool parser does not run', async () => {
  const text = '<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>';
  const m = await served.client.messages.create(params(text, { tool_choice: { type: 'none' } }));
  assert.deepEqual(m.content, [{ type: 'text', text }]);
  assert.equal(m.stop_reason, 'end_turn');
});

test('tool_choice auto with disable_parallel_tool_use is accepted', async () => {
  const m = await served.client.messages.create(params(OUTPUT, { tool_choice: { type: 'auto', disable_parallel_tool_use: false } }));
  assert.equal(m.stop_reason, 'tool_use');
});

test('tool_choice auto with disable_parallel_tool_use true: the parser returns the first tool_use only (unary and streamed)', async () => {
  const p = params(OUTPUT, { tool_choice: { type: 'auto', disable_parallel_tool_use: true } });
  const m = await served.client.messages.create(p);
  assert.deepEqual(shape(m.content), EXPECTED.slice(0, 3));
  assert.equal(m.stop_reason, 'tool_use');
  const streamed = await served.client.messages.stream(p as Anthropic.MessageStreamParams).finalMessage();
  assert.deepEqual(shape(streamed.content), EXPECTED.slice(0, 3));
  assert.equal(streamed.stop_reason, 'tool_use');
});

test('tool_choice any: the guided JSON array the engine returns becomes tool_use blocks', async () => {
  const json = '[{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}, {"name": "get_weather", "parameters": {"city": "Rome"}}]';
  const m = await served.client.messages.create(params(json, { tool_choice: { type: 'any' } }));
  assert.deepEqual(shape(m.content), [
    { type: 'tool_use', name: 'get_weather', input: { city: 'Paris', days: 3 } },
    { type: 'tool_use', name: 'get_weather', input: { city: 'Rome' } },
  ]);
  assert.equal(m.stop_reason, 'tool_use');
});

test('tool_choice tool (streamed): the guided arguments object becomes one tool_use block', async () => {
  const stream = served.client.messages.stream(params('{"city": "Oslo", "days": 2}', { tool_choice: { type: 'tool', name: 'get_weather' } }) as Anthropic.MessageStreamParams);
  const json: string[] = [];
  stream.on('inputJson', (partial) => json.push(partial));
  const m = await stream.finalMessage();
  assert.deepEqual(shape(m.content), [{ type: 'tool_use', name: 'get_weather', input: { city: 'Oslo', days: 2 } }]);
  assert.deepEqual(JSON.parse(json.join('')), { city: 'Oslo', days: 2 });
  assert.equal(m.stop_reason, 'tool_use');
});

test('an empty output is one empty text block', async () => {
  const m = await served.client.messages.create(params('<think></think>', {}));
  // An empty reasoning region yields no thinking block; Anthropic messages always carry a block.
  assert.deepEqual(m.content, [{ type: 'text', text: '' }]);
});

async function raw(body: unknown): Promise<{ status: number; json: { type: string; error: { type: string; message: string } } }> {
  const res = await fetch(`${served.server.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as { type: string; error: { type: string; message: string } } };
}

const BASE = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }], tools: TOOLS };
const BAD: [string, unknown, RegExp][] = [
  ['tool_choice tool naming an unknown tool', { ...BASE, tool_choice: { type: 'tool', name: 'nope' } }, /tool_choice.name: `nope` is not in `tools`/],
  ['tool_choice tool without a name', { ...BASE, tool_choice: { type: 'tool' } }, /tool_choice.name: Field required/],
  ['tool_choice any without tools', { ...BASE, tools: undefined, tool_choice: { type: 'any' } }, /"any" needs at least one tool/],
  ['tool_choice unknown type', { ...BASE, tool_choice: { type: 'sometimes' } }, /tool_choice.type: must be "auto", "any", "tool" or "none", got "sometimes"/],
  ['tool_choice a string', { ...BASE, tool_choice: 'auto' }, /tool_choice: must be an object/],
  ['disable_parallel_tool_use not a boolean', { ...BASE, tool_choice: { type: 'auto', disable_parallel_tool_use: 'yes' } }, /disable_parallel_tool_use: must be a boolean/],
  ['a server tool', { ...BASE, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, /tools.0.type: only custom \(client\) tools are supported/],
];
for (const [name, body, message] of BAD) {
  test(`bad tools request (${name}) is a 400 in Anthropic's error shape`, async () => {
    const r = await raw(body);
    assert.equal(r.status, 400);
    assert.equal(r.json.type, 'error');
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.match(r.json.error.message, message);
    const ok = await served.client.messages.create(params('<think>a</think>b'));
    assert.equal(ok.content.length, 2);
  });
}

test('a previous answer sent back as history (thinking with signature, tool_use, then tool_result) renders like the chat messages it stands for', async () => {
  const first = await served.client.messages.create(params(OUTPUT));
  const calls = first.content.filter((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock[];
  const history: Anthropic.MessageParam[] = [
    { role: 'user', content: 'Weather in Paris and Rome?' },
    { role: 'assistant', content: first.content },
    { role: 'user', content: [...calls.map((c, i) => ({ type: 'tool_result' as const, tool_use_id: c.id, content: i === 0 ? '21°C' : '25°C' })), { type: 'text', text: 'Thanks!' }] },
  ];
  const counted = await served.client.messages.countTokens({ model: 'm', tools: TOOLS, messages: history });
  const res = await fetch(`${served.server.url}/tokenize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'm',
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: TOOLS[0].input_schema } }],
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { role: 'assistant', content: 'Let me check.', reasoning_content: REASONING, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } })) },
        { role: 'tool', tool_call_id: calls[0].id, content: '21°C' },
        { role: 'tool', tool_call_id: calls[1].id, content: '25°C' },
        { role: 'user', content: 'Thanks!' },
      ],
    }),
  });
  assert.equal(res.status, 200);
  assert.equal(counted.input_tokens, ((await res.json()) as { count: number }).count);
});

test('the thinking parameter reaches the template (Qwen3 renders an empty think block when it is disabled)', async () => {
  const base = { model: 'm', messages: [{ role: 'user' as const, content: 'Hi' }] };
  const on = await served.client.messages.countTokens({ ...base, thinking: { type: 'enabled', budget_tokens: 1024 } });
  const off = await served.client.messages.countTokens({ ...base, thinking: { type: 'disabled' } });
  const omitted = await served.client.messages.countTokens(base);
  assert.equal(on.input_tokens, omitted.input_tokens);
  assert.ok(off.input_tokens > on.input_tokens, `disabled ${off.input_tokens} > enabled ${on.input_tokens}`);
});

test('thinking disabled turns a gated reasoning parser off (PRE.2): no thinking block', async (t) => {
  // deepseek_r1 starts inside reasoning (forced) and is gated by thinking=false.
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1', '--reasoning-parser', 'deepseek_r1']);
  t.after(() => s.stop());
  const c = new Anthropic({ baseURL: s.url, apiKey: 'unused', maxRetries: 0 });
  const body = (extra: object) => ({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'pondering</think>answer' }], nvext: { use_raw_prompt: true }, ...extra }) as Anthropic.MessageCreateParamsNonStreaming;
  const on = await c.messages.create(body({ thinking: { type: 'enabled', budget_tokens: 1024 } }));
  assert.deepEqual(on.content.map((b) => b.type), ['thinking', 'text']);
  assert.equal((on.content[0] as Anthropic.ThinkingBlock).thinking, 'pondering');
  const off = await c.messages.create(body({ thinking: { type: 'disabled' } }));
  assert.deepEqual(off.content, [{ type: 'text', text: 'pondering</think>answer' }]);
  const bad = await fetch(`${s.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body({ thinking: { type: 'sometimes' } })) });
  assert.equal(bad.status, 400);
  const err = (await bad.json()) as { type: string; error: { type: string; message: string } };
  assert.equal(err.error.type, 'invalid_request_error');
  assert.match(err.error.message, /`thinking.type` must be "enabled" or "disabled", got "sometimes"/);
});

test('max_tokens cutting a call: stop_reason max_tokens, the unfinished call is text (never a tool_use with invalid JSON)', async () => {
  const { Model } = await import('../src/native/core.js');
  const tok = Model.load(QWEN3);
  const text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>';
  const ids = tok.encode(text, false);
  // The first token count whose text reaches into the city's value: the call is cut there.
  let k = 1;
  while (!tok.decode(ids.subarray(0, k), false).includes('"Par')) k++;
  const cut = tok.decode(ids.subarray(0, k), false);
  const m = await served.client.messages.create({ ...params(text), max_tokens: k });
  assert.equal(m.stop_reason, 'max_tokens');
  assert.deepEqual(shape(m.content), [{ type: 'text', text: cut }]);
});
