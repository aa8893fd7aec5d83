// POST /parse/function_call and /parse/reasoning: a named parser run over given text,
// through the real server (raw fetch, exact bodies), and every bad input.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';


const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1']);

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${served.server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const TOOLS = [
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } } } },
];

test('function_call: hermes text splits into normal text and calls, argument bytes kept', async () => {
  const text = 'Checking.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3.0}}\n</tool_call>';
  const r = await post('/parse/function_call', { text, tool_call_parser: 'hermes', tools: TOOLS });
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { normal_text: 'Checking.', calls: [{ tool_index: 1, name: 'get_weather', parameters: '{"city": "Paris", "days": 3.0}' }] });
});

test('function_call: without tools, tool_index is null; qwen3_coder values without a schema are strings (vLLM and SGLang)', async () => {
  const text = '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>';
  const r = await post('/parse/function_call', { text, tool_call_parser: 'qwen3_coder' });
  assert.equal(r.status, 200);
  const calls = r.json.calls as { tool_index: number | null; name: string; parameters: string }[];
  assert.equal(r.json.normal_text, '');
  assert.equal(calls.length, 1);
  assert.equal(calls[0].tool_index, null);
  assert.deepEqual(JSON.parse(calls[0].parameters), { city: 'Paris', days: '3' });
});

test('function_call: with the schema, a string parameter stays a string', async () => {
  const text = '<tool_call>\n<function=get_weather>\n<parameter=city>\n1234\n</parameter>\n</function>\n</tool_call>';
  const r = await post('/parse/function_call', { text, tool_call_parser: 'qwen3_coder', tools: TOOLS });
  const calls = r.json.calls as { parameters: string }[];
  assert.deepEqual(JSON.parse(calls[0].parameters), { city: '1234' });
});

test('function_call: flat Responses-shaped tools type parameters too; a call to a tool not in tools has tool_index -1', async () => {
  const text = '<tool_call>\n<function=get_weather>\n<parameter=city>\n1234\n</parameter>\n</function>\n</tool_call><tool_call>\n<function=other>\n</function>\n</tool_call>';
  const r = await post('/parse/function_call', { text, tool_call_parser: 'qwen3_coder', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] });
  const calls = r.json.calls as { tool_index: number; name: string; parameters: string }[];
  assert.deepEqual(calls.map((c) => [c.tool_index, c.name, JSON.parse(c.parameters)]), [[0, 'get_weather', { city: '1234' }], [-1, 'other', {}]]);
});

test('function_call: plain text has no calls', async () => {
  const r = await post('/parse/function_call', { text: 'no tools here', tool_call_parser: 'hermes' });
  assert.deepEqual(r.json, { normal_text: 'no tools here', calls: [] });
});

test('reasoning: qwen3 and a forced parser (deepseek_r1 starts inside reasoning)', async () => {
  assert.deepEqual((await post('/parse/reasoning', { text: '<think>hmm</think>answer', reasoning_parser: 'qwen3' })).json, { normal_text: 'answer', reasoning_text: 'hmm' });
  assert.deepEqual((await post('/parse/reasoning', { text: 'hmm</think>answer', reasoning_parser: 'deepseek_r1' })).json, { normal_text: 'answer', reasoning_text: 'hmm' });
  assert.deepEqual((await post('/parse/reasoning', { text: 'just an answer', reasoning_parser: 'qwen3' })).json, { normal_text: 'just an answer', reasoning_text: '' });
});

const BAD: [string, string, unknown, string | null, RegExp][] = [
  ['unknown tool parser', '/parse/function_call', { text: 'x', tool_call_parser: 'nope' }, 'tool_call_parser', /unknown tool_call_parser "nope"; valid names: hermes, qwen25, .*qwen3_coder/],
  ['unknown reasoning parser', '/parse/reasoning', { text: 'x', reasoning_parser: 'nope' }, 'reasoning_parser', /unknown reasoning_parser "nope"; valid names: basic, qwen3, .*deepseek_r1/],
  ['parser missing', '/parse/function_call', { text: 'x' }, 'tool_call_parser', /`tool_call_parser` is required \(valid names: hermes/],
  ['reasoning parser missing', '/parse/reasoning', { text: 'x' }, 'reasoning_parser', /`reasoning_parser` is required/],
  ['parser not a string', '/parse/reasoning', { text: 'x', reasoning_parser: 3 }, 'reasoning_parser', /unknown reasoning_parser 3/],
  ['text missing', '/parse/reasoning', { reasoning_parser: 'qwen3' }, 'text', /`text` is required/],
  ['text not a string', '/parse/function_call', { text: ['x'], tool_call_parser: 'hermes' }, 'text', /`text` must be a string/],
  ['tools not an array', '/parse/function_call', { text: 'x', tool_call_parser: 'hermes', tools: {} }, 'tools', /`tools` must be an array/],
  ['tool without a name', '/parse/function_call', { text: 'x', tool_call_parser: 'hermes', tools: [{ type: 'function', function: {} }] }, 'tools', /`tools\[0\]` must be a function tool with a name/],
  ['unknown field', '/parse/reasoning', { text: 'x', reasoning_parser: 'qwen3', stream: true }, 'stream', /Unsupported parameter\(s\): `stream`/],
  // read as the API bodies are (the gate): a lone surrogate is not text (serde_json, which the
  // parsers read `tools` with, rejects it; it was a 500), and nesting stops at 512 levels (a
  // recursive walk overflowed the stack at 10,000: a 500)
  ['a lone surrogate in a tool schema', '/parse/function_call', '{"text":"","tool_call_parser":"hermes","tools":[{"function":{"name":"W","parameters":{"x":"\\uD800"}}}]}', 'tools', /invalid JSON at byte 91: invalid escape sequence in string/],
  ['a lone surrogate in the text', '/parse/reasoning', '{"text":"\\uDFFFa","reasoning_parser":"qwen3"}', 'text', /invalid JSON at byte 9: invalid escape sequence in string/],
  ['a parser name nested 10,000 deep', '/parse/reasoning', `{"text":"x","reasoning_parser":${'{"a":'.repeat(10000)}1${'}'.repeat(10000)}}`, 'reasoning_parser', /invalid JSON at byte 2586: nesting too deep/],
  ['tool parameters nested 10,000 deep', '/parse/function_call', `{"text":"x","tool_call_parser":"hermes","tools":[{"function":{"name":"W","parameters":${'{"a":'.repeat(10000)}1${'}'.repeat(10000)}}}]}`, 'tools', /nesting too deep/],
  // inside the gate's 512 but past the 128 levels serde_json reads tool schemas to (was a 500)
  ['tool parameters nested 200 deep', '/parse/function_call', `{"text":"x","tool_call_parser":"qwen3_coder","tools":[{"function":{"name":"W","parameters":{"x":${'['.repeat(200)}${']'.repeat(200)}}}}]}`, 'tools', /^`tools` cannot be read by the tool-call parser: nested deeper than 128 levels/],
  ['a parser name nested just inside the limit', '/parse/reasoning', `{"text":"x","reasoning_parser":${'{"a":'.repeat(511)}1${'}'.repeat(511)}}`, 'reasoning_parser', /unknown reasoning_parser \{"a":/],
  ['body not JSON', '/parse/reasoning', '{"text":', null, /invalid JSON/],
  ['body not an object', '/parse/function_call', '[1]', null, /must be a JSON object/],
];
for (const [name, path, body, param, message] of BAD) {
  test(`bad parse request (${name}) is a 400 and the server keeps serving`, async () => {
    const r = await post(path, body);
    assert.equal(r.status, 400);
    const err = (r.json as { error: { message: string; type: string; param: string | null } }).error;
    assert.equal(err.type, 'invalid_request_error');
    assert.equal(err.param, param);
    assert.match(err.message, message);
    const ok = await post('/parse/reasoning', { text: '<think>a</think>b', reasoning_parser: 'qwen3' });
    assert.deepEqual(ok.json, { normal_text: 'b', reasoning_text: 'a' });
  });
}
