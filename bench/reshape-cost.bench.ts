// What the Anthropic Messages and Responses readers' reshape costs (JSON.parse of the body's
// messages → chat-template messages → JSON.stringify into a small template body, which the
// native renderer reads through spans), against reading the same conversation as an OpenAI
// chat body (the gate's span scan, no reshape), and against the native render + encode that
// both then run. Three turns, a system prompt and one tool, ~1 KB; CPU per request.
//
// Run: npm run build:ts && node dist/bench/reshape-cost.bench.js [iterations=20000]

import { readAnthropicRequest } from '../src/protocol/anthropic-request.js';
import { readChatRequest } from '../src/protocol/chat-request.js';
import { readResponsesRequest } from '../src/protocol/responses-request.js';
import { Model } from '../src/native/core.js';
import { QWEN3 } from './wrk-harness.js';

const N = Number(process.argv[2] ?? 20_000);
const model = Model.load(QWEN3);

const turns = [
  ['user', 'What is the weather like in Paris today? I am planning a walk along the Seine.'],
  ['assistant', 'It is sunny and 21 degrees in Paris, a good afternoon for a walk along the river.'],
  ['user', 'And tomorrow morning? Should I take an umbrella with me, or is it going to stay dry?'],
] as const;
const tool = { name: 'get_weather', description: 'The weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const system = 'You are a helpful assistant that answers briefly and precisely.';

const chatBody = Buffer.from(
  JSON.stringify({
    model: 'm',
    max_tokens: 64,
    messages: [{ role: 'system', content: system }, ...turns.map(([role, content]) => ({ role, content }))],
    tools: [{ type: 'function', function: tool }],
  }),
);
const anthropicBody = Buffer.from(
  JSON.stringify({
    model: 'm',
    max_tokens: 64,
    system,
    messages: turns.map(([role, content]) => ({ role, content: [{ type: 'text', text: content }] })),
    tools: [{ name: tool.name, description: tool.description, input_schema: tool.parameters }],
  }),
);
const responsesBody = Buffer.from(
  JSON.stringify({
    model: 'm',
    max_output_tokens: 64,
    instructions: system,
    input: turns.map(([role, content]) => ({ role, content })),
    tools: [{ type: 'function', ...tool }],
  }),
);

function time(label: string, f: () => unknown): number {
  for (let i = 0; i < Math.min(2000, N); i++) f();
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) f();
  const c = process.cpuUsage(c0);
  const us = (c.user + c.system) / N;
  console.log(`| ${label} | ${us.toFixed(2)} µs |`);
  return us;
}

console.log(`${N} iterations; bodies: chat ${chatBody.length} B, anthropic ${anthropicBody.length} B, responses ${responsesBody.length} B\n| step | CPU / request |\n|---|---:|`);
const chatRead = time('read OpenAI chat body (span scan)', () => readChatRequest(chatBody, false, () => ''));
const anthRead = time('read Anthropic body (parse + reshape + stringify)', () => readAnthropicRequest(anthropicBody, false));
const respRead = time('read Responses body (parse + reshape + stringify)', () => readResponsesRequest(responsesBody, false, () => ''));
const chat = readChatRequest(chatBody, false, () => '');
const anth = readAnthropicRequest(anthropicBody, false);
// (The same body each time: the native messages and prompt caches are warm, a lower bound.)
const render = time('native render + encode, warm caches (chat body spans)', () =>
  model.encodeChat(chatBody, chat.messages.start, chat.messages.end, chat.tools?.start ?? -1, chat.tools?.end ?? -1, true, null),
);
const p = anth.prompt;
const renderA = time('native render + encode, warm caches (reshaped template body)', () =>
  model.encodeChat(p.body, p.messages.start, p.messages.end, p.tools?.start ?? -1, p.tools?.end ?? -1, true, null),
);
console.log(`reshape cost over the chat read: Anthropic +${(anthRead - chatRead).toFixed(2)} µs, Responses +${(respRead - chatRead).toFixed(2)} µs; render ${render.toFixed(1)} / ${renderA.toFixed(1)} µs`);
