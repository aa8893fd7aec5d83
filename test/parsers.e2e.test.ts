// Tool-call and reasoning parsing through the server: the echo engine returns exactly the
// text sent (nvext.use_raw_prompt), so the model's "output" is chosen by the test, and the
// real Qwen3 tokenizer splits it into tokens the way a model would.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startPortico, runPortico, QWEN3 } from './helpers/portico.js';
import { useParserServer, OUTPUT } from './helpers/parser-server.js';

const served = useParserServer((url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

const TOOLS: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

function req(content: string, extra: object = {}) {
  return { model: 'm', messages: [{ role: 'user', content }], tools: TOOLS, nvext: { use_raw_prompt: true }, ...extra } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
}

test('reasoning, content and parallel tool calls come apart (non-streaming)', async () => {
  const r = await served.client.chat.completions.create(req(OUTPUT));
  const m = r.choices[0].message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
  assert.equal(m.reasoning_content, 'The user wants weather; call the tool.');
  assert.equal(m.content, 'Let me check.');
  assert.equal(m.tool_calls?.length, 2);
  const [a, b] = m.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
  assert.equal(a.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(a.function.arguments), { city: 'Paris', days: 3 });
  assert.deepEqual(JSON.parse(b.function.arguments), { city: 'Rome' });
  assert.notEqual(a.id, b.id, 'parallel calls get distinct ids');
  assert.equal(r.choices[0].finish_reason, 'tool_calls');
});

test('the same output streamed: deltas assemble to the same message', async () => {
  const stream = await served.client.chat.completions.create({ ...req(OUTPUT), stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
  let reasoning = '';
  let content = '';
  const calls: { id?: string; name?: string; args: string }[] = [];
  let finish: string | null = null;
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    if (!c) continue;
    const d = c.delta as typeof c.delta & { reasoning_content?: string };
    reasoning += d.reasoning_content ?? '';
    content += d.content ?? '';
    for (const tc of d.tool_calls ?? []) {
      calls[tc.index] ??= { args: '' };
      if (tc.id) calls[tc.index].id = tc.id;
      if (tc.function?.name) calls[tc.index].name = tc.function.name;
      calls[tc.index].args += tc.function?.arguments ?? '';
    }
    if (c.finish_reason) finish = c.finish_reason;
  }
  assert.equal(reasoning, 'The user wants weather; call the tool.');
  assert.equal(content, 'Let me check.');
  assert.deepEqual(calls.map((c) => [c.name, JSON.parse(c.args)]), [['get_weather', { city: 'Paris', days: 3 }], ['get_weather', { city: 'Rome' }]]);
  assert.ok(calls.every((c) => c.id));
  assert.equal(finish, 'tool_calls');
});

test('without tools in the request the tool parser does not run (markers stay content)', async () => {
  const r = await served.client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Plain <tool_call>{}</tool_call> text' }], nvext: { use_raw_prompt: true } } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(r.choices[0].message.content, 'Plain <tool_call>{}</tool_call> text');
  assert.equal(r.choices[0].finish_reason, 'stop');
});

test('tool_choice none keeps tool markup as content', async () => {
  const r = await served.client.chat.completions.create(req('<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>', { tool_choice: 'none' }));
  assert.equal(r.choices[0].message.tool_calls, undefined);
  assert.match(r.choices[0].message.content ?? '', /<tool_call>/);
});

test('a per-request thinking switch turns a gated reasoning parser off (PRE.2)', async (t) => {
  // minimax_m2 starts inside reasoning (forced) and is gated by enable_thinking / thinking.
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1', '--reasoning-parser', 'minimax_m2']);
  t.after(() => s.stop());
  const c = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const body = (extra: object) => ({ model: 'm', messages: [{ role: 'user', content: 'pondering</think>answer' }], nvext: { use_raw_prompt: true }, ...extra }) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
  const on = (await c.chat.completions.create(body({}))).choices[0].message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
  assert.equal(on.reasoning_content, 'pondering');
  assert.equal(on.content, 'answer');
  const off = (await c.chat.completions.create(body({ chat_template_kwargs: { enable_thinking: false } }))).choices[0].message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
  assert.equal(off.reasoning_content, undefined);
  assert.equal(off.content, 'pondering</think>answer');
});

test('an unknown parser name is a startup error listing the valid names', async () => {
  const r = await runPortico(['serve', '--model-path', QWEN3, '--mock', 'echo', '--http-port', '0', '--reasoning-parser', 'nope']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--reasoning-parser: unknown parser `nope` \(valid names: .*qwen3/);
});
