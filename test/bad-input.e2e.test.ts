// A table-driven bad-input suite across the endpoints: every case asserts the status,
// the error type, a precise message, and that the server still answers a good request
// right after. Cases are generated per field from the contract (range, type), so a new
// field gets its bad inputs by adding one row.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';

const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1']);

interface Case {
  name: string;
  path: string;
  body: unknown;
  status: number;
  type: string;
  message: RegExp;
  /** The error's `param`, when the case names it. */
  param?: string | null;
}

const CHAT = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const COMPLETION = { model: 'm', prompt: 'hi' };
const MESSAGES = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
const RESPONSES = { model: 'm', input: 'hi' };

type Range = [field: string, low: number | null, high: number | null, kind: 'number' | 'integer'];
const OPENAI_RANGES: Range[] = [
  ['temperature', -0.1, 2.1, 'number'],
  ['top_p', -0.1, 1.1, 'number'],
  ['min_p', -0.5, 1.5, 'number'],
  ['frequency_penalty', -2.5, 2.5, 'number'],
  ['presence_penalty', -2.5, 2.5, 'number'],
  ['repetition_penalty', 0, 2.5, 'number'],
  ['top_k', -2, null, 'integer'],
  ['n', 0, 129, 'integer'],
  ['max_tokens', 0, null, 'integer'],
  ['max_completion_tokens', -1, null, 'integer'],
  ['min_tokens', -1, null, 'integer'],
  ['seed', null, null, 'integer'],
];
const OPENAI_BOOLEANS = ['stream', 'ignore_eos', 'skip_special_tokens'];
const CHAT_BOOLEANS = ['add_generation_prompt', 'parallel_tool_calls'];

const cases: Case[] = [];
const bad = (path: string, name: string, body: unknown, message: RegExp, status = 400, type = 'invalid_request_error') => cases.push({ name, path, body, status, type, message });
/** A 400 invalid_request_error whose `param` is checked too. */
const badParam = (path: string, name: string, body: unknown, message: RegExp, param: string | null) =>
  cases.push({ name, path, body, status: 400, type: 'invalid_request_error', message, param });

// Sampling options that reach the engine (logit_bias, structured output, logprobs, passthrough allowlist).
for (const [path, base] of [['/v1/chat/completions', CHAT], ['/v1/completions', COMPLETION]] as const) {
  const P = (name: string, body: Record<string, unknown>, message: RegExp, param: string) => badParam(path, name, { ...base, ...body }, message, param);
  P('logit_bias an array', { logit_bias: [1] }, /`logit_bias` must be an object mapping token ids to biases/, 'logit_bias');
  P('logit_bias a string', { logit_bias: 'x' }, /`logit_bias` must be an object/, 'logit_bias');
  P('logit_bias keyed by a word', { logit_bias: { abc: 1 } }, /`logit_bias` keys must be token ids .*"abc"/, 'logit_bias');
  P('logit_bias keyed by a negative id', { logit_bias: { '-1': 1 } }, /`logit_bias` keys must be token ids .*"-1"/, 'logit_bias');
  P('logit_bias keyed by a fraction', { logit_bias: { '1.5': 1 } }, /`logit_bias` keys must be token ids/, 'logit_bias');
  P('logit_bias with a string bias', { logit_bias: { '5': 'x' } }, /`logit_bias\["5"\]` must be a number/, 'logit_bias');
  P('logit_bias with a null bias', { logit_bias: { '5': null } }, /`logit_bias\["5"\]` must be a number/, 'logit_bias');
  P('logit_bias above 100', { logit_bias: { '5': 100.5 } }, /`logit_bias\["5"\]` must be at least -100 and at most 100, got 100.5/, 'logit_bias');
  P('logit_bias below -100', { logit_bias: { '5': -101 } }, /at most 100, got -101/, 'logit_bias');
  P('logit_bias outside the vocabulary', { logit_bias: { '999999999': 1 } }, /token id 999999999, outside the vocabulary \(size \d+\)/, 'logit_bias');
  P('response_format a string', { response_format: 'json' }, /`response_format` must be an object/, 'response_format');
  P('response_format of an unknown type', { response_format: { type: 'xml' } }, /`response_format.type` must be one of .*got "xml"/, 'response_format.type');
  P('response_format without a type', { response_format: {} }, /`response_format.type` must be one of .*got null/, 'response_format.type');
  P('json_schema without json_schema', { response_format: { type: 'json_schema' } }, /`response_format.json_schema` is required/, 'response_format.json_schema');
  P('json_schema without a name', { response_format: { type: 'json_schema', json_schema: { schema: {} } } }, /`response_format.json_schema.name` must be a non-empty string/, 'response_format.json_schema.name');
  P('json_schema with a name of spaces', { response_format: { type: 'json_schema', json_schema: { name: 'a b', schema: {} } } }, /1 to 64 characters/, 'response_format.json_schema.name');
  P('json_schema without a schema', { response_format: { type: 'json_schema', json_schema: { name: 'x' } } }, /`response_format.json_schema.schema` must be a JSON schema object/, 'response_format.json_schema.schema');
  P('json_schema with a string schema', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: '{}' } } }, /`response_format.json_schema.schema` must be a JSON schema object/, 'response_format.json_schema.schema');
  P('json_schema with strict a string', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {}, strict: 'yes' } } }, /`response_format.json_schema.strict` must be a boolean/, 'response_format.json_schema.strict');
  P('guided_json a number', { guided_json: 5 }, /`guided_json` must be a JSON schema/, 'guided_json');
  P('guided_json a string that is not JSON', { guided_json: '{type' }, /the string is not JSON/, 'guided_json');
  P('guided_json a JSON array string', { guided_json: '[1]' }, /`guided_json` must be a JSON schema/, 'guided_json');
  P('guided_regex a number', { guided_regex: 5 }, /`guided_regex` must be a string/, 'guided_regex');
  P('guided_regex empty', { guided_regex: '' }, /`guided_regex` must not be empty/, 'guided_regex');
  P('guided_grammar a boolean', { guided_grammar: true }, /`guided_grammar` must be a string/, 'guided_grammar');
  P('guided_grammar empty', { guided_grammar: '' }, /`guided_grammar` must not be empty/, 'guided_grammar');
  P('guided_choice a string', { guided_choice: 'a' }, /`guided_choice` must be an array of strings/, 'guided_choice');
  P('guided_choice empty', { guided_choice: [] }, /`guided_choice` must not be empty/, 'guided_choice');
  P('guided_choice with a number', { guided_choice: ['a', 1] }, /`guided_choice\[1\]` must be a string/, 'guided_choice');
  P('two constraints (guided_json and guided_regex)', { guided_json: {}, guided_regex: 'a' }, /only one structured output constraint .*`guided_json` and `guided_regex`/, 'guided_regex');
  P('two constraints (response_format and guided_choice)', { response_format: { type: 'json_object' }, guided_choice: ['a'] }, /only one structured output constraint .*`response_format` and `guided_choice`/, 'guided_choice');
  P('structured_outputs a string', { structured_outputs: 'json' }, /`structured_outputs` must be an object/, 'structured_outputs');
  P('structured_outputs empty', { structured_outputs: {} }, /`structured_outputs` needs one of `json`, `regex`/, 'structured_outputs');
  P('structured_outputs with two constraints', { structured_outputs: { regex: 'a', choice: ['b'] } }, /`structured_outputs` takes one constraint, got `regex` and `choice`/, 'structured_outputs');
  P('structured_outputs with an unknown key', { structured_outputs: { regex: 'a', backend: 'xgrammar' } }, /Unsupported parameter\(s\): `structured_outputs.backend`/, 'structured_outputs.backend');
  P('structured_outputs.json a number', { structured_outputs: { json: 3 } }, /`structured_outputs.json` must be a JSON schema/, 'structured_outputs.json');
  P('structured_outputs.regex empty', { structured_outputs: { regex: '' } }, /`structured_outputs.regex` must be a non-empty string/, 'structured_outputs.regex');
  P('structured_outputs.choice with a number', { structured_outputs: { choice: [1] } }, /`structured_outputs.choice\[0\]` must be a string/, 'structured_outputs.choice');
  P('structured_outputs.json_object a string', { structured_outputs: { json_object: 'yes' } }, /`structured_outputs.json_object` must be a boolean/, 'structured_outputs.json_object');
  P('structured_outputs.disable_any_whitespace (no engine field)', { structured_outputs: { regex: 'a', disable_any_whitespace: true } }, /`structured_outputs.disable_any_whitespace` cannot be delivered/, 'structured_outputs.disable_any_whitespace');
  P('structured_outputs.whitespace_pattern a number', { structured_outputs: { regex: 'a', whitespace_pattern: 1 } }, /`structured_outputs.whitespace_pattern` must be a string/, 'structured_outputs.whitespace_pattern');
  P('structured_outputs with guided_regex', { structured_outputs: { json: {} }, guided_regex: 'a' }, /only one structured output constraint .*`structured_outputs` and `guided_regex`/, 'guided_regex');
  P('return_tokens_as_token_ids a string', { return_tokens_as_token_ids: 'yes' }, /`return_tokens_as_token_ids` must be a boolean/, 'return_tokens_as_token_ids');
  P('detokenize a number', { detokenize: 0 }, /`detokenize` must be a boolean/, 'detokenize');
  P('detokenize false with stop strings', { detokenize: false, stop: ['x'] }, /stop strings \(`stop`\) need `detokenize` to be true/, 'detokenize');
  // Admission before validation (spec 000): neither engine protocol carries these, so a
  // valid and an invalid value get the same unsupported_parameter.
  const UNDELIVERABLE = /cannot be delivered: neither engine protocol/;
  P('allowed_token_ids a string', { allowed_token_ids: '1' }, UNDELIVERABLE, 'allowed_token_ids');
  P('allowed_token_ids with a negative id', { allowed_token_ids: [1, -2] }, UNDELIVERABLE, 'allowed_token_ids');
  P('allowed_token_ids empty', { allowed_token_ids: [] }, UNDELIVERABLE, 'allowed_token_ids');
  P('allowed_token_ids (no engine field carries it)', { allowed_token_ids: [1, 2] }, /`allowed_token_ids` cannot be delivered: neither engine protocol/, 'allowed_token_ids');
  P('bad_words_token_ids flat', { bad_words_token_ids: [12, 13] }, UNDELIVERABLE, 'bad_words_token_ids');
  P('bad_words_token_ids with a string id', { bad_words_token_ids: [['a']] }, UNDELIVERABLE, 'bad_words_token_ids');
  P('bad_words_token_ids with an empty word', { bad_words_token_ids: [[]] }, UNDELIVERABLE, 'bad_words_token_ids');
  P('bad_words_token_ids (no engine field carries it)', { bad_words_token_ids: [[12, 13]] }, /`bad_words_token_ids` cannot be delivered: neither engine protocol/, 'bad_words_token_ids');
  P('nvext.max_thinking_tokens a string (admission first)', { nvext: { max_thinking_tokens: 'x' } }, /`nvext.max_thinking_tokens` cannot be delivered/, 'nvext.max_thinking_tokens');
  P('nvext.max_thinking_tokens negative (admission first)', { nvext: { max_thinking_tokens: -1 } }, /`nvext.max_thinking_tokens` cannot be delivered/, 'nvext.max_thinking_tokens');
  // Integers past their wire type.
  P('max_tokens of 2^32', { max_tokens: 2 ** 32 }, /`max_tokens` must be a 32-bit unsigned integer from 1 to 4294967295, got 4294967296/, 'max_tokens');
  P('max_tokens of 1e20 written out', { max_tokens: 1e20 }, /`max_tokens` must be a 32-bit unsigned integer/, 'max_tokens');
  P('top_k of 2^31', { top_k: 2 ** 31 }, /`top_k` must be a 32-bit integer from -1 to 2147483647, got 2147483648/, 'top_k');
  P('min_tokens of 2^32', { min_tokens: 2 ** 32 }, /`min_tokens` must be a 32-bit unsigned integer/, 'min_tokens');
  P('seed past int64', { seed: 2 ** 63 }, /`seed` must be a 64-bit integer from -9223372036854775808 to 9223372036854775807/, 'seed');
  P('seed below int64', { seed: -(2 ** 64) }, /`seed` must be a 64-bit integer/, 'seed');
  P('stop_token_ids outside the vocabulary', { stop_token_ids: [999999999] }, /`stop_token_ids` \(or `stop`\) holds token id 999999999, outside the vocabulary/, 'stop_token_ids');
  P('a token id in stop outside the vocabulary', { stop: [999999999] }, /holds token id 999999999, outside the vocabulary/, 'stop_token_ids');
  P('stop_token_ids past u32', { stop_token_ids: [2 ** 32] }, /`stop_token_ids` must be an array of non-negative integer token ids/, 'stop_token_ids');
  P('logit_bias keyed past u32', { logit_bias: { '4294967296': 1 } }, /`logit_bias` keys must be token ids/, 'logit_bias');
  P('nvext.backend_instance_id past u64', { nvext: { backend_instance_id: 2 ** 65 } }, /`nvext.backend_instance_id` must be an integer from 0 to 18446744073709551615 \(u64\)/, 'nvext.backend_instance_id');
  P('nvext.backend_instance_id negative', { nvext: { backend_instance_id: -1 } }, /`nvext.backend_instance_id` must be an integer from 0/, 'nvext.backend_instance_id');
  P('nvext.dp_rank past u32', { nvext: { dp_rank: 2 ** 32 } }, /`nvext.dp_rank` must be an integer from 0 to 4294967295/, 'nvext.dp_rank');
  P('nvext.agent_hints.priority past i32', { nvext: { agent_hints: { priority: 2 ** 31 } } }, /`nvext.agent_hints.priority` must be a 32-bit integer/, 'nvext.agent_hints.priority');
  P('nvext.agent_hints.osl past u32', { nvext: { agent_hints: { osl: 2 ** 32 } } }, /`nvext.agent_hints.osl` must be an integer from 0 to 4294967295/, 'nvext.agent_hints.osl');
  P('n of 2^32', { n: 2 ** 32 }, /`n` must be at least 1 and at most 128/, 'n');
  // The context length comes from the engine (the fixture has no config.json; the mock says 32768).
  P('max_tokens past the engine context', { max_tokens: 40000 }, /This model's maximum context length is 32768 tokens\. However, you requested 400\d\d tokens/, 'max_tokens');
}

// Message shapes, checked natively before the template renders anything.
const M = (name: string, msg: Record<string, unknown>, message: RegExp, param: string) =>
  badParam('/v1/chat/completions', `message shape: ${name}`, { model: 'm', messages: [{ role: 'user', content: 'hi' }, msg] }, message, param);
M('tool_calls a string', { role: 'assistant', tool_calls: 'x'.repeat(4096) }, /^`messages\[1\]\.tool_calls` must be an array of tool call objects, got a string$/, 'messages[1].tool_calls');
M('tool_calls an object', { role: 'assistant', tool_calls: { id: 'c' } }, /`messages\[1\]\.tool_calls` must be an array of tool call objects, got an object/, 'messages[1].tool_calls');
M('a tool call that is a string', { role: 'assistant', tool_calls: ['call'] }, /`messages\[1\]\.tool_calls\[0\]` must be a tool call object, got a string/, 'messages[1].tool_calls[0]');
M('a tool call without an id', { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }, /`messages\[1\]\.tool_calls\[0\]\.id` is required/, 'messages[1].tool_calls[0].id');
M('a tool call of another type', { role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', function: { name: 'f', arguments: '{}' } }] }, /`messages\[1\]\.tool_calls\[0\]\.type` must be "function", got "custom"/, 'messages[1].tool_calls[0].type');
M('a tool call function a string', { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: 'f' }] }, /`messages\[1\]\.tool_calls\[0\]\.function` must be an object, got a string/, 'messages[1].tool_calls[0].function');
M('a tool call without a name', { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { arguments: '{}' } }] }, /`messages\[1\]\.tool_calls\[0\]\.function\.name` is required/, 'messages[1].tool_calls[0].function.name');
M('tool call arguments an array', { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: [1] } }] }, /`messages\[1\]\.tool_calls\[0\]\.function\.arguments` must be a string \(JSON text\) or an object, got an array/, 'messages[1].tool_calls[0].function.arguments');
M('role missing', { content: 'x' }, /`messages\[1\]\.role` is required/, 'messages[1].role');
M('role a number', { role: 1, content: 'x' }, /`messages\[1\]\.role` must be a string, got a number/, 'messages[1].role');
M('content an object', { role: 'user', content: { text: 'x' } }, /`messages\[1\]\.content` must be a string, an array of content parts or null, got an object/, 'messages[1].content');
M('a content part that is a number', { role: 'user', content: [5] }, /`messages\[1\]\.content\[0\]` must be a content part object, got a number/, 'messages[1].content[0]');
M('a text part whose text is a number', { role: 'user', content: [{ type: 'text', text: 5 }] }, /`messages\[1\]\.content\[0\]\.text` must be a string, got a number/, 'messages[1].content[0].text');
M('an image_url part without image_url', { role: 'user', content: [{ type: 'image_url' }] }, /`messages\[1\]\.content\[0\]\.image_url` is required/, 'messages[1].content[0].image_url');
M('an input_audio part without data', { role: 'user', content: [{ type: 'input_audio', input_audio: { format: 'wav' } }] }, /`messages\[1\]\.content\[0\]\.input_audio\.data` is required/, 'messages[1].content[0].input_audio.data');
M('tool_call_id a number', { role: 'tool', tool_call_id: 7, content: 'x' }, /`messages\[1\]\.tool_call_id` must be a string, got a number/, 'messages[1].tool_call_id');
M('name an array', { role: 'user', name: ['a'], content: 'x' }, /`messages\[1\]\.name` must be a string, got an array/, 'messages[1].name');
M('reasoning_content a number', { role: 'assistant', content: 'x', reasoning_content: 3 }, /`messages\[1\]\.reasoning_content` must be a string, got a number/, 'messages[1].reasoning_content');
badParam('/v1/chat/completions', 'message shape on the raw-prompt path', { model: 'm', messages: [{ role: 'assistant', tool_calls: 'xyz' }], nvext: { use_raw_prompt: true } }, /`messages\[0\]\.tool_calls` must be an array/, 'messages[0].tool_calls');
badParam('/tokenize', 'message shape on /tokenize', { model: 'm', messages: [{ role: 'assistant', tool_calls: 'xyz' }] }, /`messages\[0\]\.tool_calls` must be an array/, 'messages[0].tool_calls');

const CP = (name: string, body: Record<string, unknown>, message: RegExp, param: string) => badParam('/v1/chat/completions', name, { ...CHAT, ...body }, message, param);
const TOOL_F = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }];
CP('tool_choice required without tools', { tool_choice: 'required' }, /`tool_choice` "required" needs at least one tool in `tools`/, 'tool_choice');
CP('tool_choice required with an empty tools list', { tools: [], tool_choice: 'required' }, /`tool_choice` "required" needs at least one tool in `tools`/, 'tool_choice');
CP('tool_choice naming a function not in tools', { tools: TOOL_F, tool_choice: { type: 'function', function: { name: 'g' } } }, /names the function `g`, which is not in `tools`/, 'tool_choice');
CP('tool_choice naming a function without tools', { tool_choice: { type: 'function', function: { name: 'f' } } }, /names the function `f`, which is not in `tools`/, 'tool_choice');
CP('tool_choice an object without a function name', { tools: TOOL_F, tool_choice: { type: 'function' } }, /`tool_choice` as an object must be \{"type": "function", "function": \{"name": \.\.\.\}\}/, 'tool_choice');
CP('tool_choice an unknown string', { tools: TOOL_F, tool_choice: 'always' }, /`tool_choice` must be "none", "auto", "required" or a named function, got "always"/, 'tool_choice');
CP('tool_choice required with response_format', { tools: TOOL_F, tool_choice: 'required', response_format: { type: 'json_object' } }, /already constrains the output to tool-call JSON; it cannot be combined with `response_format` or `guided_\*`/, 'tool_choice');
CP('tool_choice named with guided_json', { tools: TOOL_F, tool_choice: { type: 'function', function: { name: 'f' } }, guided_json: {} }, /cannot be combined with `response_format` or `guided_\*`/, 'tool_choice');
CP(
  'tool_choice required with tools whose $defs differ',
  {
    tools: [
      { type: 'function', function: { name: 'f', parameters: { type: 'object', $defs: { D: { type: 'string' } } } } },
      { type: 'function', function: { name: 'g', parameters: { type: 'object', $defs: { D: { type: 'integer' } } } } },
    ],
    tool_choice: 'required',
  },
  /`\$defs\.D` of `g` differs from another tool's/,
  'tools',
);
CP('logprobs a number', { logprobs: 1 }, /`logprobs` must be a boolean/, 'logprobs');
CP('top_logprobs above 20', { logprobs: true, top_logprobs: 21 }, /`top_logprobs` must be at least 0 and at most 20, got 21/, 'top_logprobs');
CP('top_logprobs negative', { logprobs: true, top_logprobs: -1 }, /`top_logprobs` must be at least 0 and at most 20, got -1/, 'top_logprobs');
CP('top_logprobs a fraction', { logprobs: true, top_logprobs: 1.5 }, /`top_logprobs` must be an integer/, 'top_logprobs');
CP('top_logprobs without logprobs', { top_logprobs: 2 }, /`top_logprobs` needs `logprobs` set to true/, 'top_logprobs');
CP('top_logprobs with logprobs false', { logprobs: false, top_logprobs: 2 }, /`top_logprobs` needs `logprobs` set to true/, 'top_logprobs');
CP('thinking a string', { thinking: 'on' }, /`thinking` must be an object/, 'thinking');
CP('thinking of an unknown type', { thinking: { type: 'auto' } }, /`thinking.type` must be "enabled" or "disabled", got "auto"/, 'thinking.type');
CP('thinking without a type', { thinking: { budget_tokens: 5 } }, /`thinking.type` must be "enabled" or "disabled", got null/, 'thinking.type');
CP('thinking.budget_tokens a string', { thinking: { type: 'enabled', budget_tokens: '5' } }, /`thinking.budget_tokens` must be a positive integer/, 'thinking.budget_tokens');
CP('thinking.budget_tokens zero', { thinking: { type: 'enabled', budget_tokens: 0 } }, /`thinking.budget_tokens` must be a positive integer/, 'thinking.budget_tokens');
CP('thinking with an unknown key', { thinking: { type: 'enabled', effort: 'high' } }, /Unsupported parameter\(s\): `thinking.effort`/, 'thinking.effort');
CP('reasoning_effort unknown', { reasoning_effort: 'max' }, /`reasoning_effort` must be one of "none", "minimal", "low", "medium", "high", "xhigh", got "max"/, 'reasoning_effort');
CP('reasoning_effort a number', { reasoning_effort: 1 }, /`reasoning_effort` must be a string/, 'reasoning_effort');
CP('best_of on chat', { best_of: 2 }, /Unsupported parameter\(s\): `best_of`/, 'best_of');

const KP = (name: string, body: Record<string, unknown>, message: RegExp, param: string) => badParam('/v1/completions', name, { ...COMPLETION, ...body }, message, param);
KP('logprobs a boolean', { logprobs: true }, /`logprobs` must be an integer/, 'logprobs');
KP('logprobs above 20', { logprobs: 21 }, /`logprobs` must be at least 0 and at most 20, got 21/, 'logprobs');
KP('logprobs negative', { logprobs: -1 }, /`logprobs` must be at least 0 and at most 20, got -1/, 'logprobs');
KP('top_logprobs on completions', { top_logprobs: 2 }, /Unsupported parameter\(s\): `top_logprobs`/, 'top_logprobs');
KP('best_of below n', { n: 3, temperature: 1, best_of: 2 }, /`best_of` must be greater than or equal to `n` \(3\), got 2/, 'best_of');
KP('best_of above n, streamed', { n: 1, best_of: 2, stream: true }, /`best_of` greater than `n` cannot be streamed/, 'best_of');
KP('best_of above 128', { best_of: 129 }, /`best_of` must be at most 128, got 129/, 'best_of');
KP('best_of with greedy sampling', { best_of: 2, temperature: 0 }, /`best_of` greater than 1 needs a non-zero `temperature`/, 'best_of');
KP('best_of a string', { best_of: '2' }, /`best_of` must be an integer/, 'best_of');

for (const [path, base] of [['/v1/chat/completions', CHAT], ['/v1/completions', COMPLETION]] as const) {
  for (const [field, low, high, kind] of OPENAI_RANGES) {
    if (field === 'max_completion_tokens' && path === '/v1/completions') continue;
    if (low !== null) bad(path, `${field} below its range`, { ...base, [field]: low }, new RegExp(`\`${field}\``));
    if (high !== null) bad(path, `${field} above its range`, { ...base, [field]: high }, new RegExp(`\`${field}\``));
    bad(path, `${field} as a string`, { ...base, [field]: '1' }, new RegExp(`\`${field}\` must be (a number|an integer)`));
    bad(path, `${field} as a boolean`, { ...base, [field]: true }, new RegExp(`\`${field}\` must be (a number|an integer)`));
    if (kind === 'integer') bad(path, `${field} as a fraction`, { ...base, [field]: 1.5 }, new RegExp(`\`${field}\` must be an integer`));
  }
  for (const field of [...OPENAI_BOOLEANS, ...(path === '/v1/chat/completions' ? CHAT_BOOLEANS : ['echo', 'add_special_tokens'])]) {
    bad(path, `${field} as a string`, { ...base, [field]: 'true' }, new RegExp(`\`${field}\` must be a boolean`));
    bad(path, `${field} as a number`, { ...base, [field]: 1 }, new RegExp(`\`${field}\` must be a boolean`));
  }
  bad(path, 'an unknown field', { ...base, bogus: 1 }, /Unsupported parameter\(s\): `bogus`/);
  bad(path, 'two unknown fields', { ...base, bogus: 1, other: null }, /Unsupported parameter\(s\): `bogus`, `other`/);
  bad(path, 'model missing', { ...base, model: undefined }, /`model` is required/);
  bad(path, 'model empty', { ...base, model: '' }, /`model` must not be blank/);
  bad(path, 'model an array', { ...base, model: ['m'] }, /`model` must be a string/);
  bad(path, 'an unknown model', { ...base, model: 'nope' }, /`nope` does not exist/, 404);
  bad(path, 'stream_options without stream', { ...base, stream_options: { include_usage: true } }, /`stream_options`/);
  bad(path, 'stream_options with an unknown key', { ...base, stream: true, stream_options: { bogus: true } }, /`stream_options\.bogus`/);
  bad(path, 'stream_options.include_usage a string', { ...base, stream: true, stream_options: { include_usage: 'yes' } }, /`stream_options\.include_usage` must be a boolean/);
  bad(path, 'stop_token_ids with a negative id', { ...base, stop_token_ids: [-1] }, /`stop_token_ids`/);
  bad(path, 'stop_token_ids not an array', { ...base, stop_token_ids: 5 }, /`stop_token_ids` must be an array/);
  bad(path, 'min_tokens above max_tokens', { ...base, min_tokens: 9, max_tokens: 3 }, /`min_tokens`/);
  bad(path, 'nvext with an unknown key', { ...base, nvext: { bogus: 1 } }, /`nvext\.bogus`/);
  bad(path, 'nvext.agent_hints.priority a string', { ...base, nvext: { agent_hints: { priority: 'high' } } }, /`nvext\.agent_hints\.priority` must be an integer/);
  bad(path, 'nvext.greed_sampling a string', { ...base, nvext: { greed_sampling: 'yes' } }, /`nvext\.greed_sampling` must be a boolean/);
  bad(path, 'nvext.cache_salt a number', { ...base, nvext: { cache_salt: 5 } }, /`nvext\.cache_salt` must be a string/);
  bad(path, 'top-level cache_salt a number', { ...base, cache_salt: 5 }, /`cache_salt` must be a string/);
  bad(path, 'nvext.dp_rank negative', { ...base, nvext: { dp_rank: -1 } }, /`nvext\.dp_rank`/);
  bad(path, 'a worker id that does not exist', { ...base, nvext: { backend_instance_id: 99 } }, /worker 99 does not exist/);
}

bad('/v1/chat/completions', 'messages a string', { model: 'm', messages: 'hi' }, /`messages` must be an array/);
bad('/v1/chat/completions', 'messages an object', { model: 'm', messages: { role: 'user' } }, /`messages` must be an array/);
bad('/v1/chat/completions', 'a message without a role the template knows', { model: 'm', messages: [42] }, /./);
bad('/v1/chat/completions', 'tools an object', { ...CHAT, tools: { type: 'function' } }, /`tools` must be an array/);
bad('/v1/chat/completions', 'a tool name with a dot', { ...CHAT, tools: [{ type: 'function', function: { name: 'a.b' } }] }, /function\.name`/);
bad('/v1/chat/completions', 'a tool description as a number', { ...CHAT, tools: [{ type: 'function', function: { name: 'f', description: 3 } }] }, /description` must be a string/);
bad('/v1/chat/completions', 'tool_choice a number', { ...CHAT, tool_choice: 1 }, /`tool_choice` must be a string or an object/);
bad('/v1/chat/completions', 'chat_template_kwargs a string', { ...CHAT, chat_template_kwargs: 'x' }, /`chat_template_kwargs` must be an object/);
bad('/v1/chat/completions', 'use_raw_prompt a string', { ...CHAT, nvext: { use_raw_prompt: 'yes' } }, /`nvext\.use_raw_prompt` must be a boolean/);
bad('/v1/chat/completions', 'extra_fields not strings', { ...CHAT, nvext: { extra_fields: [1] } }, /`nvext\.extra_fields` must be an array of strings/);
bad('/v1/chat/completions', 'token_data with strings', { ...CHAT, nvext: { token_data: ['a'], backend_instance_id: 0 } }, /`nvext\.token_data`/);

bad('/v1/completions', 'prompt null', { model: 'm', prompt: null }, /`prompt` is required/);
bad('/v1/completions', 'prompt nested too deep', { model: 'm', prompt: [[[1]]] }, /token ids/);
bad('/v1/completions', 'a prompt list with an empty string', { model: 'm', prompt: ['a', ''] }, /`prompt\[1\]` must not be an empty string/);
bad('/v1/completions', 'a token list with an empty list', { model: 'm', prompt: [[1], []] }, /`prompt\[1\]` must not be empty/);
bad('/v1/completions', 'nvext.use_raw_prompt', { model: 'm', prompt: 'x', nvext: { use_raw_prompt: true } }, /not supported on \/v1\/completions/);

const A = (name: string, body: unknown, message: RegExp, status = 400, type = 'invalid_request_error') => bad('/v1/messages', name, body, message, status, type);
A('max_tokens zero', { ...MESSAGES, max_tokens: 0 }, /max_tokens: must be at least 1/);
A('max_tokens a string', { ...MESSAGES, max_tokens: '5' }, /`max_tokens` must be an integer/);
A('top_p above 1', { ...MESSAGES, top_p: 1.2 }, /top_p/);
A('top_k zero', { ...MESSAGES, top_k: 0 }, /top_k: must be at least 1/);
A('temperature negative', { ...MESSAGES, temperature: -1 }, /temperature/);
A('system a number', { ...MESSAGES, system: 5 }, /system: must be a string or an array of text blocks/);
A('system with an image block', { ...MESSAGES, system: [{ type: 'image' }] }, /system\.0: must be a text block/);
A('content a number', { ...MESSAGES, messages: [{ role: 'user', content: 5 }] }, /content: Field required/);
A('tool_result without an id', { ...MESSAGES, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, /tool_use_id: Field required/);
A('tool_use without a name', { ...MESSAGES, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't' , input: {} }] }] }, /needs an id and a name/);
A('tool_use input a string', { ...MESSAGES, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: 'x' }] }] }, /input: must be an object/);
A('a tool without input_schema', { ...MESSAGES, tools: [{ name: 'f' }] }, /tools\.0\.input_schema: Field required/);
A('a tool without a name', { ...MESSAGES, tools: [{ input_schema: {} }] }, /tools\.0\.name: Field required/);
A('stream a string', { ...MESSAGES, stream: 'yes' }, /`stream` must be a boolean/);
A('an unknown model', { ...MESSAGES, model: 'nope' }, /nope/, 404, 'not_found_error');
// (The HTTP fuzzer's find: an empty block list left no message, and the prefill check read past it: a 500.)
A('every message an empty block list', { ...MESSAGES, messages: [{ role: 'user', content: [] }] }, /messages: every message is empty/);
A('a system prompt and an empty block list', { ...MESSAGES, system: 'Be brief.', messages: [{ role: 'user', content: [] }] }, /messages: every message is empty/);
bad('/v1/messages/count_tokens', 'count_tokens with every message an empty block list', { model: 'm', messages: [{ role: 'user', content: [] }] }, /messages: every message is empty/);
bad('/v1/messages/count_tokens', 'count_tokens without messages', { model: 'm' }, /messages: Field required/);
bad('/v1/messages/count_tokens', 'count_tokens with an unknown field', { model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 3 }, /Unsupported parameter\(s\): `max_tokens`/);

A('max_tokens of 2^32', { ...MESSAGES, max_tokens: 2 ** 32 }, /`max_tokens` must be a 32-bit unsigned integer from 1 to 4294967295, got 4294967296/);
A('top_k of 2^31', { ...MESSAGES, top_k: 2 ** 31 }, /`top_k` must be a 32-bit integer from 1 to 2147483647/);
A('max_tokens past the engine context', { ...MESSAGES, max_tokens: 40000 }, /maximum context length is 32768 tokens/);
A('nvext.dp_rank past u32', { ...MESSAGES, nvext: { dp_rank: 2 ** 32 } }, /`nvext.dp_rank` must be an integer from 0 to 4294967295/);

const R = (name: string, body: unknown, message: RegExp) => bad('/v1/responses', name, body, message);
R('max_output_tokens of 2^32', { ...RESPONSES, max_output_tokens: 2 ** 32 }, /`max_output_tokens` must be a 32-bit unsigned integer from 1 to 4294967295/);
R('max_output_tokens past the engine context', { ...RESPONSES, max_output_tokens: 40000 }, /maximum context length is 32768 tokens/);
R('nvext.backend_instance_id past u64', { ...RESPONSES, nvext: { backend_instance_id: 2 ** 65 } }, /\(u64\)/);
R('input a number', { ...RESPONSES, input: 5 }, /`input` must be a string or an array/);
R('input empty', { ...RESPONSES, input: [] }, /`input` must not be empty/);
R('a function_call without arguments', { ...RESPONSES, input: [{ type: 'function_call', call_id: 'c', name: 'f' }] }, /function_call needs call_id, name and arguments/);
R('a function_call_output without output', { ...RESPONSES, input: [{ type: 'function_call_output', call_id: 'c' }] }, /function_call_output needs call_id and output/);
R('content parts of another type', { ...RESPONSES, input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'x' }] }] }, /only input_text, output_text and input_image parts/);
R('an input_image part for a model without image input', { ...RESPONSES, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }] }, /`input\[0\]\.content\[0\]`: model .* does not take image input/);
R('temperature above 2', { ...RESPONSES, temperature: 3 }, /`temperature`/);
R('top_p negative', { ...RESPONSES, top_p: -0.5 }, /`top_p`/);
R('a tool without a name', { ...RESPONSES, tools: [{ type: 'function' }] }, /`tools\[0\]\.name` is required/);
R('instructions a number', { ...RESPONSES, instructions: 5 }, /`instructions` must be a string/);
R('an unknown field', { ...RESPONSES, bogus: true }, /Unsupported parameter\(s\): `bogus`/);
const RP = (name: string, body: Record<string, unknown>, message: RegExp, param: string) => badParam('/v1/responses', name, { ...RESPONSES, ...body }, message, param);
RP('text a string', { text: 'json' }, /`text` must be an object/, 'text');
RP('text with an unknown key', { text: { format: { type: 'text' }, bogus: 1 } }, /Unsupported parameter\(s\): `text.bogus`/, 'text.bogus');
RP('text.format of an unknown type', { text: { format: { type: 'xml' } } }, /`text.format.type` must be one of .*got "xml"/, 'text.format.type');
RP('text.format json_schema without a name', { text: { format: { type: 'json_schema', schema: {} } } }, /`text.format.name` must be 1 to 64 characters/, 'text.format.name');
RP('text.format json_schema without a schema', { text: { format: { type: 'json_schema', name: 'x' } } }, /`text.format.schema` must be a JSON schema object/, 'text.format.schema');
RP('text.format.strict a string', { text: { format: { type: 'json_schema', name: 'x', schema: {}, strict: 'yes' } } }, /`text.format.strict` must be a boolean/, 'text.format.strict');
RP('reasoning a string', { reasoning: 'high' }, /`reasoning` must be an object/, 'reasoning');
RP('reasoning.effort unknown', { reasoning: { effort: 'max' } }, /`reasoning.effort` must be one of .*got "max"/, 'reasoning.effort');
RP('reasoning.summary unknown', { reasoning: { summary: 'long' } }, /`reasoning.summary` must be one of "auto", "concise", "detailed", got "long"/, 'reasoning.summary');
RP('reasoning with an unknown key', { reasoning: { budget: 5 } }, /Unsupported parameter\(s\): `reasoning.budget`/, 'reasoning.budget');

bad('/tokenize', 'tokenize with prompt a number', { model: 'm', prompt: 5 }, /`prompt` must be a string/);
bad('/tokenize', 'tokenize with messages empty', { model: 'm', messages: [] }, /`messages` must not be empty/);
bad('/detokenize', 'detokenize with tokens a string', { model: 'm', tokens: 'abc' }, /`tokens` must be an array/);
bad('/detokenize', 'detokenize with a fractional token', { model: 'm', tokens: [1.5] }, /non-negative integer/);
bad('/detokenize', 'detokenize with a token past u32', { model: 'm', tokens: [2 ** 32] }, /non-negative integer/);
bad('/detokenize', 'detokenize with a negative token', { model: 'm', tokens: [-1] }, /non-negative integer/);
bad('/detokenize', 'detokenize with a token outside the vocabulary', { model: 'm', tokens: [999999999] }, /token id 999999999 is out of the vocabulary/);
bad('/v1/completions', 'a token prompt outside the vocabulary', { model: 'm', prompt: [1, 999999999] }, /token id 999999999 is out of the vocabulary/);
bad('/v1/completions', 'a batch of 2049 prompts', { model: 'm', prompt: Array.from({ length: 2049 }, () => 'x') }, /`prompt` holds 2049 inputs; at most 2048 are allowed/);
bad('/v1/completions', 'a token prompt past u32', { model: 'm', prompt: [2 ** 32] }, /must hold non-negative integer token ids/);
bad('/v1/completions', 'a token prompt with a negative id', { model: 'm', prompt: [-1] }, /must hold non-negative integer token ids/);

const E = (name: string, body: unknown, message: RegExp, status = 400) => bad('/v1/embeddings', name, body, message, status);
E('input missing', { model: 'm' }, /`input` is required/);
E('input an empty string', { model: 'm', input: '' }, /`input` must not be an empty string/);
E('input an empty array', { model: 'm', input: [] }, /`input` must not be empty/);
E('input a number', { model: 'm', input: 3 }, /`input` must be a string, an array of strings/);
E('a batch with an empty token list', { model: 'm', input: [[1], []] }, /`input\[1\]` must not be empty/);
E('a batch item null', { model: 'm', input: ['a', null] }, /`input\[1\]` must be a string or an array of token ids, got null/);
E('encoding_format unknown', { model: 'm', input: 'a', encoding_format: 'binary' }, /`encoding_format` must be "float" or "base64"/);
E('dimensions zero', { model: 'm', input: 'a', dimensions: 0 }, /`dimensions` must be at least 1/);
E('dimensions a string', { model: 'm', input: 'a', dimensions: 'all' }, /`dimensions` must be an integer/);
E('an unknown field', { model: 'm', input: 'a', max_tokens: 3 }, /Unsupported parameter\(s\): `max_tokens`/);
E('an unknown model', { model: 'nope', input: 'a' }, /`nope` does not exist/, 404);
E('dimensions of 2^32', { model: 'm', input: 'a', dimensions: 2 ** 32 }, /`dimensions` must be a 32-bit unsigned integer/);
E('a token input outside the vocabulary', { model: 'm', input: [999999999] }, /holds token id 999999999, outside the vocabulary/);
E('nvext.backend_instance_id past u64', { model: 'm', input: 'a', nvext: { backend_instance_id: 2 ** 65 } }, /\(u64\)/);

for (const path of ['/v1/chat/completions', '/v1/completions', '/v1/responses', '/v1/embeddings', '/tokenize']) {
  bad(path, 'a body that is not JSON', 'not json', /invalid JSON/);
  // 1e400 is Infinity as a double: refused as a number, wherever it sits in the body.
  bad(path, 'a number past the double range (1e400)', '{"model": "m", "temperature": 1e400}', /invalid JSON.*invalid number/);
  bad(path, 'a nested number past the double range (-1e400)', '{"model": "m", "nvext": {"agent_hints": {"latency_sensitivity": -1e400}}}', /invalid JSON.*invalid number/);
  bad(path, 'a JSON array body', '[]', /must be a JSON object/);
  bad(path, 'truncated JSON', '{"model": "m"', /invalid JSON/);
}

// One JSON reading for every endpoint (the gate, src/protocol/fields.ts): a lone surrogate
// escape (valid JSON grammar, but no Unicode text; serde_json and the tokenizer cannot take it)
// and nesting past 512 levels (docs/fields.md) are the same 400 everywhere, never a 500.
const deep = (levels: number, inner = '1') => '{"a":'.repeat(levels) + inner + '}'.repeat(levels);
for (const [path, base] of [
  ['/v1/chat/completions', '{"model":"m","messages":[{"role":"user","content":"hi"}]'],
  ['/v1/completions', '{"model":"m","prompt":"hi"'],
  ['/v1/responses', '{"model":"m","input":"hi"'],
  ['/v1/messages', '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]'],
  ['/v1/messages/count_tokens', '{"model":"m","messages":[{"role":"user","content":"hi"}]'],
  ['/v1/embeddings', '{"model":"m","input":"hi"'],
  ['/tokenize', '{"model":"m","prompt":"hi"'],
  ['/parse/reasoning', '{"text":"hi","reasoning_parser":"qwen3"'],
  ['/parse/function_call', '{"text":"hi","tool_call_parser":"hermes"'],
] as const) {
  // `param` names the top-level member whose value is invalid (the Anthropic shape has none)
  const B = path.startsWith('/v1/messages')
    ? (name: string, body: string, message: RegExp) => bad(path, name, body, message)
    : (name: string, body: string, message: RegExp) => badParam(path, name, body, message, 'x');
  B('a lone high surrogate escape', `${base},"x":"a\\uD800b"}`, /invalid JSON at byte \d+: invalid escape sequence in string/);
  B('a lone low surrogate escape', `${base},"x":["\\uDC00"]}`, /invalid JSON at byte \d+: invalid escape sequence in string/);
  B('a member nested 10,000 deep', `${base},"x":${deep(10000)}}`, /invalid JSON at byte \d+: nesting too deep/);
  B('nesting one level past 512', `${base},"x":${deep(512)}}`, /invalid JSON at byte \d+: nesting too deep/);
}
badParam('/v1/chat/completions', 'a lone surrogate in a tool schema', '{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"W","parameters":{"x":"\\uD800"}}}]}', /invalid JSON at byte 127: invalid escape sequence in string/, 'tools');
badParam('/v1/chat/completions', 'a lone surrogate in message content', '{"model":"m","messages":[{"role":"user","content":"hi\\uD800"}]}', /invalid JSON at byte 53: invalid escape sequence in string/, 'messages');
// inside the gate's 512 levels, past the 128 the native message and tools readers take: a 400
// naming the member (the tools case is read beside the messages; it used to say `messages`)
badParam('/v1/chat/completions', 'a tool schema nested 200 deep', `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"W","parameters":{"x":${'['.repeat(200)}${']'.repeat(200)}}}}]}`, /tools: recursion limit exceeded/, 'tools');
badParam('/v1/chat/completions', 'a message member nested 200 deep', `{"model":"m","messages":[{"role":"user","content":"hi","x":${'['.repeat(200)}${']'.repeat(200)}}]}`, /invalid messages JSON: recursion limit exceeded/, 'messages');
badParam('/v1/responses', 'a responses tool schema nested 200 deep', `{"model":"m","input":"hi","tools":[{"type":"function","name":"W","parameters":{"type":"object","x":${'['.repeat(200)}${']'.repeat(200)}}}]}`, /tools: recursion limit exceeded/, 'tools');
badParam('/v1/completions', 'an escaped member name with a bad value', '{"model":"m","prompt":"hi","\\u0078y":[tru]}', /invalid JSON at byte \d+: /, 'xy');
badParam('/v1/completions', 'a truncated body names no member', '{"model":"m","prompt":"hi', /invalid JSON/, null);

test(`the suite has at least 150 bad inputs (${cases.length})`, () => {
  assert.ok(cases.length >= 150);
});

const GOOD = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'ok' }], max_tokens: 2 });

for (const c of cases) {
  test(`${c.path}: ${c.name} → ${c.status}`, async () => {
    const res = await fetch(`${served.server.url}${c.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof c.body === 'string' ? c.body : JSON.stringify(c.body),
    });
    const json = (await res.json()) as { error: { type: string; message: string } };
    assert.equal(res.status, c.status, json.error?.message);
    assert.equal(json.error.type, c.type);
    assert.match(json.error.message, c.message);
    if (c.param !== undefined) assert.equal((json.error as { param?: string }).param, c.param);
    const ok = await fetch(`${served.server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: GOOD });
    assert.equal(ok.status, 200, 'the server still serves');
    await ok.text();
  });
}
