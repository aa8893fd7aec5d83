// Valid request bodies for every POST endpoint the HTTP fuzzer drives (admin routes are
// not driven here; their access checks have tests of their own). Each seed is a body the server accepts
// with a 2xx; the mutators start from these, so most inputs get deep into validation. The
// image seeds are accepted by the server of a model that takes images; the text-only
// servers refuse them (a 400), which is fuzzed as well.

import { rgbPng } from '../helpers/png.js';

export const MODEL = 'm';

/** The error body shape an endpoint answers with. */
export type ErrorShape = 'openai' | 'anthropic';
/** The terminal event a stream of that endpoint ends with. */
export type StreamKind = 'openai' | 'anthropic' | 'responses' | null;

export interface Endpoint {
  readonly path: string;
  readonly errors: ErrorShape;
  readonly stream: StreamKind;
  /** Valid bodies (plain JSON values). */
  readonly seeds: readonly unknown[];
}

/** The text the echo engine returns with nvext.use_raw_prompt: reasoning, then a hermes tool call. */
export const MODEL_OUTPUT = '<think>Check the weather.</think>Let me look.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>';

const TOOLS = [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] } } }];
const ANTHROPIC_TOOLS = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
const RESPONSES_TOOLS = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];

export const TOOL_PARSERS = ['hermes', 'nemotron_deci', 'llama3_json', 'mistral', 'phi4', 'jamba', 'deepseek_v3', 'deepseek_v3_1', 'deepseek_v3_2', 'deepseek_v4', 'qwen3_coder', 'nemotron_nano', 'minimax_m2', 'minimax_m3', 'glm47', 'glm45', 'kimi_k2', 'harmony', 'pythonic', 'llama4_pythonic', 'gemma4', 'default', 'xlam', 'granite', 'internlm', 'hunyuan_a13b', 'seed_oss', 'step3', 'cohere_command'];
export const REASONING_PARSERS = ['basic', 'qwen3', 'deepseek_r1', 'deepseek_v3', 'deepseek_v3_1', 'deepseek_v3_2', 'deepseek_v4', 'nemotron_deci', 'nemotron_nano', 'nemotron3', 'nemotron_v3', 'glm45', 'step3', 'kimi', 'kimi_k25', 'mistral', 'granite', 'gpt_oss', 'gemma4', 'minimax_append_think', 'minimax_m2', 'minimax_m3', 'cohere_command'];

/** Model outputs in several parsers' formats (the parse endpoints run each through every parser). */
const PARSE_TEXTS = [
  MODEL_OUTPUT,
  '<tool_call>{"name":"get_weather","arguments":{"city":"Rome"}}</tool_call>',
  '[get_weather(city="Paris", days=3)]',
  '{"name": "get_weather", "parameters": {"city": "Paris"}}',
  '[TOOL_CALLS][{"name":"get_weather","arguments":{"city":"Paris"}}]',
  '<|tool▁calls▁begin|><|tool▁call▁begin|>function<|tool▁sep|>get_weather\n```json\n{"city":"Paris"}\n```<|tool▁call▁end|><|tool▁calls▁end|>',
  '<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>',
  '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>',
  '<minimax:tool_call><invoke name="get_weather"><parameter name="city">Paris</parameter></invoke></minimax:tool_call>',
  '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|>',
  'plain text with no call',
];

const messages = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'What is the weather in Paris? é 🚀' },
];

/** Small PNGs (a few image tokens each), as data: URLs and base64: the image seeds' pictures. */
const PNG_A = rgbPng(30, 20, (x, y) => [x * 8, y * 12, 90]);
const PNG_B = rgbPng(16, 40, (x, y) => [200, x * 15, y * 6]);
const dataUrl = (b: Buffer) => `data:image/png;base64,${b.toString('base64')}`;
const imageMessages = [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: dataUrl(PNG_A), detail: 'low' } }, { type: 'image_url', image_url: dataUrl(PNG_B) }] }];

export const ENDPOINTS: readonly Endpoint[] = [
  {
    path: '/v1/chat/completions',
    errors: 'openai',
    stream: 'openai',
    seeds: [
      { model: MODEL, messages, max_tokens: 8 },
      { model: MODEL, messages, max_tokens: 16, stream: true, stream_options: { include_usage: true }, temperature: 0.7, top_p: 0.9, seed: 7, n: 1 },
      { model: MODEL, messages: [...messages, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, { role: 'tool', tool_call_id: 'c1', content: 'sunny' }], tools: TOOLS, tool_choice: 'auto', max_tokens: 8 },
      { model: MODEL, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], max_completion_tokens: 4, stop: ['\n'], logprobs: true, top_logprobs: 2, nvext: { top_k: 4 } },
      { model: MODEL, messages: [{ role: 'user', content: MODEL_OUTPUT }], max_tokens: 64, stream: true, tools: TOOLS, nvext: { use_raw_prompt: true } },
      { model: MODEL, messages, max_tokens: 8, response_format: { type: 'json_object' }, chat_template_kwargs: { enable_thinking: false } },
      { model: MODEL, messages: imageMessages, max_tokens: 4, stream: true },
    ],
  },
  {
    path: '/v1/completions',
    errors: 'openai',
    stream: 'openai',
    seeds: [
      { model: MODEL, prompt: 'Once upon a time', max_tokens: 8 },
      { model: MODEL, prompt: ['a', 'b'], max_tokens: 4, stream: true, echo: false, logprobs: 2 },
      { model: MODEL, prompt: [1, 2, 3, 4], max_tokens: 4, temperature: 0, stop: 'x', seed: 1 },
    ],
  },
  {
    path: '/v1/responses',
    errors: 'openai',
    stream: 'responses',
    seeds: [
      { model: MODEL, input: 'Hello', max_output_tokens: 8 },
      { model: MODEL, input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], stream: true, max_output_tokens: 8, instructions: 'Be brief.' },
      { model: MODEL, input: MODEL_OUTPUT, tools: RESPONSES_TOOLS, stream: true, max_output_tokens: 64, reasoning: { effort: 'low' } },
      { model: MODEL, input: [{ role: 'user', content: [{ type: 'input_image', image_url: dataUrl(PNG_A), detail: 'auto' }, { type: 'input_text', text: 'hi' }] }], max_output_tokens: 4, store: false },
    ],
  },
  {
    path: '/v1/messages',
    errors: 'anthropic',
    stream: 'anthropic',
    seeds: [
      { model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] },
      { model: MODEL, max_tokens: 16, stream: true, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], temperature: 0.5, stop_sequences: ['x'] },
      { model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_B.toString('base64') } }, { type: 'text', text: 'hi' }] }] },
      { model: MODEL, max_tokens: 64, stream: true, tools: ANTHROPIC_TOOLS, tool_choice: { type: 'auto' }, messages: [{ role: 'user', content: MODEL_OUTPUT }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: { city: 'Paris' } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'sunny' }] }] },
    ],
  },
  {
    path: '/v1/messages/count_tokens',
    errors: 'anthropic',
    stream: null,
    seeds: [{ model: MODEL, messages: [{ role: 'user', content: 'Hello' }] }, { model: MODEL, system: [{ type: 'text', text: 'sys' }], tools: ANTHROPIC_TOOLS, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }, { model: MODEL, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_A.toString('base64') } }] }] }],
  },
  {
    path: '/v1/embeddings',
    errors: 'openai',
    stream: null,
    seeds: [{ model: MODEL, input: 'hello' }, { model: MODEL, input: ['a', 'b c'], encoding_format: 'base64' }, { model: MODEL, input: [[1, 2, 3]], dimensions: 8 }],
  },
  {
    path: '/tokenize',
    errors: 'openai',
    stream: null,
    seeds: [{ model: MODEL, prompt: 'hello world', return_token_strs: true }, { model: MODEL, messages, add_generation_prompt: true, tools: TOOLS, chat_template_kwargs: { enable_thinking: true } }, { model: MODEL, messages: imageMessages }],
  },
  {
    path: '/detokenize',
    errors: 'openai',
    stream: null,
    seeds: [{ model: MODEL, tokens: [9707, 1879, 151643] }, { model: MODEL, tokens: [151644, 872, 198], skip_special_tokens: false }],
  },
  {
    path: '/parse/function_call',
    errors: 'openai',
    stream: null,
    seeds: TOOL_PARSERS.flatMap((p, i) => [{ text: PARSE_TEXTS[i % PARSE_TEXTS.length], tool_call_parser: p, tools: TOOLS }, { text: PARSE_TEXTS[(i + 3) % PARSE_TEXTS.length], tool_call_parser: p }]),
  },
  {
    path: '/parse/reasoning',
    errors: 'openai',
    stream: null,
    seeds: REASONING_PARSERS.map((p, i) => ({ text: PARSE_TEXTS[i % PARSE_TEXTS.length], reasoning_parser: p })),
  },
];

/** Field names from every endpoint (added where they do not belong, too). */
export const FIELD_NAMES = ['model', 'messages', 'prompt', 'input', 'max_tokens', 'max_completion_tokens', 'max_output_tokens', 'stream', 'stream_options', 'temperature', 'top_p', 'top_k', 'n', 'seed', 'stop', 'stop_sequences', 'logprobs', 'top_logprobs', 'logit_bias', 'tools', 'tool_choice', 'response_format', 'nvext', 'chat_template_kwargs', 'system', 'instructions', 'reasoning', 'thinking', 'echo', 'tokens', 'text', 'tool_call_parser', 'reasoning_parser', 'encoding_format', 'dimensions', 'presence_penalty', 'frequency_penalty', 'repetition_penalty', 'min_tokens', 'ignore_eos', 'skip_special_tokens', 'add_special_tokens', 'bad_words_token_ids', 'max_thinking_tokens', 'user', 'metadata', 'parallel_tool_calls', 'best_of', 'suffix', 'guided_json', 'structured_outputs', 'role', 'content', 'tool_calls', 'name', 'type', 'function', 'arguments', 'id', 'tool_call_id', 'use_raw_prompt', 'annotations', '__proto__', 'constructor', ''];
