// Anthropic tool_choice any / tool and Responses tool_choice required / named reach the
// engine as the same JSON-schema constraint chat completions sends for the same tools
// (spec 003 PRE.4). An in-process mock engine (SGLang protocol) records the
// GenerateRequest it received.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';

const WEATHER_PARAMS = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] };
const TIME_PARAMS = { type: 'object', properties: { zone: { type: 'string' } } };

let engine: MockEngine;
let server: Proc;
let openai: OpenAI;
let anthropic: Anthropic;

before(async () => {
  const info = Model.load(QWEN3).info();
  engine = await startMockEngine({ port: 0, mode: 'echo', protocol: 'sglang', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: 'm' });
  server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', engine.url, '--tool-call-parser', 'hermes']);
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  await server?.stop();
  await engine?.close();
});

let n = 0;

/** The json_schema the engine received for the request sent with `send(requestId)`, or undefined. */
async function schemaOf(send: (headers: { headers: Record<string, string> }) => Promise<unknown>): Promise<unknown> {
  const id = `tool-choice-apis-${n++}`;
  await send({ headers: { 'x-request-id': id } });
  const got = engine.context.received.find(id);
  assert.ok(got, `the engine received ${id}`);
  const s = (got.json() as { sampling_params: Record<string, unknown> }).sampling_params.json_schema;
  return s === undefined ? undefined : JSON.parse(s as string);
}

const chatTools = [
  { type: 'function', function: { name: 'get_weather', parameters: WEATHER_PARAMS } },
  { type: 'function', function: { name: 'get_time', parameters: TIME_PARAMS } },
];

function chat(toolChoice: unknown, extra: object = {}) {
  return (o: { headers: Record<string, string> }) =>
    openai.chat.completions.create({ model: 'm', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }], tools: chatTools, tool_choice: toolChoice, ...extra } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming, o);
}

function messages(toolChoice: unknown) {
  const tools = [
    { name: 'get_weather', input_schema: WEATHER_PARAMS },
    { name: 'get_time', input_schema: TIME_PARAMS },
  ] as Anthropic.Tool[];
  return (o: { headers: Record<string, string> }) =>
    anthropic.messages.create({ model: 'm', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: toolChoice as Anthropic.ToolChoice }, o);
}

function responses(toolChoice: unknown, extra: object = {}) {
  const tools = [
    { type: 'function', name: 'get_weather', parameters: WEATHER_PARAMS, strict: false },
    { type: 'function', name: 'get_time', parameters: TIME_PARAMS, strict: false },
  ];
  return (o: { headers: Record<string, string> }) =>
    openai.responses.create({ model: 'm', max_output_tokens: 2, input: 'Hi', tools, tool_choice: toolChoice, ...extra } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming, o);
}

test('Anthropic any / tool and Responses required / named send chat\'s constraint for the same tools', async () => {
  const required = await schemaOf(chat('required'));
  const single = await schemaOf(chat('required', { parallel_tool_calls: false }));
  const named = await schemaOf(chat({ type: 'function', function: { name: 'get_weather' } }));
  assert.equal((required as { type: string }).type, 'array');
  assert.equal((single as { maxItems: number }).maxItems, 1);
  assert.deepEqual(named, WEATHER_PARAMS);

  assert.deepEqual(await schemaOf(messages({ type: 'any' })), required);
  assert.deepEqual(await schemaOf(messages({ type: 'any', disable_parallel_tool_use: true })), single);
  assert.deepEqual(await schemaOf(messages({ type: 'tool', name: 'get_weather' })), named);
  assert.deepEqual(await schemaOf(responses('required')), required);
  assert.deepEqual(await schemaOf(responses('required', { parallel_tool_calls: false })), single);
  assert.deepEqual(await schemaOf(responses({ type: 'function', name: 'get_weather' })), named);
});

test('auto and none do not constrain the engine', async () => {
  assert.equal(await schemaOf(messages({ type: 'auto' })), undefined);
  assert.equal(await schemaOf(messages({ type: 'none' })), undefined);
  assert.equal(await schemaOf(responses('auto')), undefined);
  assert.equal(await schemaOf(responses('none')), undefined);
});
