// The streaming parsers through the N-API binding: names, errors, the PRE table, and
// streaming deltas that add up to the same result as one push, at every split point.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  OutputParser,
  type ParserDelta,
  type ParserOutput,
  toolParserNames,
  reasoningParserNames,
  parserDecisions,
  requiresSpecialTokens,
  reasoningDisabledByRequest,
  promptInjectedReasoning,
} from '../src/native/parsers.js';

interface Merged {
  content: string;
  reasoning: string;
  calls: { index: number; id: string; name: string; args: string }[];
}

function mergeInto(m: Merged, out: ParserOutput): void {
  if (typeof out === 'string') {
    m.content += out;
    return;
  }
  for (const d of out as ParserDelta[]) {
    if (d.kind === 'content') m.content += d.text;
    else if (d.kind === 'reasoning') m.reasoning += d.text;
    else if (d.kind === 'tool_start') m.calls.push({ index: d.index, id: d.id, name: d.name, args: '' });
    else m.calls[d.index].args += d.text;
  }
}

function run(tool: string | null, reasoning: string | null, chunks: string[], opts = { idSeed: 1 }): Merged {
  const p = new OutputParser(tool, reasoning, opts);
  const m: Merged = { content: '', reasoning: '', calls: [] };
  for (const c of chunks) mergeInto(m, p.push(c));
  mergeInto(m, p.finish());
  return m;
}

test('registry names include every issue name and alias', () => {
  const tools = toolParserNames();
  for (const n of ['hermes', 'qwen25', 'qwen3_coder', 'llama3_json', 'mistral', 'deepseek_v3', 'deepseek_v3_1',
    'deepseek_v4', 'deepseek-v4', 'deepseekv4', 'kimi_k2', 'harmony', 'pythonic', 'glm47', 'glm45', 'minimax_m2',
    'gemma4', 'gemma-4', 'default']) {
    assert.ok(tools.includes(n), n);
  }
  const reasoning = reasoningParserNames();
  for (const n of ['basic', 'qwen3', 'deepseek_r1', 'gpt_oss', 'kimi', 'kimi_k25', 'nemotron_v3', 'minimax_append_think']) {
    assert.ok(reasoning.includes(n), n);
  }
});

test('an unknown parser name throws InvalidArg listing the valid names', () => {
  assert.throws(() => new OutputParser('nope', null), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'InvalidArg');
    assert.match(e.message, /unknown tool call parser "nope"; valid names: .*hermes/);
    return true;
  });
  assert.throws(() => parserDecisions(null, 'nope'), /valid names/);
});

test('plain content comes back as a string (no objects built)', () => {
  const p = new OutputParser('hermes', null);
  assert.equal(p.push('Hello'), 'Hello');
  assert.equal(p.push(' <tool'), ' ');
  assert.equal(p.push('-less'), '<tool-less');
  assert.equal(p.finish(), '');
  assert.equal(p.toolCallCount, 0);
});

test('qwen3 reasoning + hermes calls stream to OpenAI-shaped deltas at every split point', () => {
  const text =
    '<think>Weather needs a tool. 日本 🦀</think>Checking.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tōkyō", "n": 1.0, "big": 123456789012345678901}}\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';
  const whole = run('hermes', 'qwen3', [text]);
  assert.equal(whole.reasoning, 'Weather needs a tool. 日本 🦀');
  assert.equal(whole.content, 'Checking.');
  assert.deepEqual(whole.calls.map((c) => [c.index, c.name, c.args]), [
    [0, 'get_weather', '{"city": "Tōkyō", "n": 1.0, "big": 123456789012345678901}'],
    [1, 'get_time', '{}'],
  ]);
  assert.notEqual(whole.calls[0].id, whole.calls[1].id);
  assert.match(whole.calls[0].id, /^call_[0-9A-Za-z]{24}$/);
  // every split point between code points (the detokenizer never splits a character)
  const cps = Array.from(text);
  for (let i = 1; i < cps.length; i++) {
    assert.deepEqual(run('hermes', 'qwen3', [cps.slice(0, i).join(''), cps.slice(i).join('')]), whole, `split at ${i}`);
  }
  const p = new OutputParser('hermes', 'qwen3');
  for (const ch of text) p.push(ch);
  p.finish();
  assert.equal(p.toolCallCount, 2);
});

test('kimi_k2 keeps native ids; harmony splits channels', () => {
  const k = run('kimi_k2', null, ['<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{"q": "x"}<|tool_call_end|><|tool_calls_section_end|>']);
  assert.deepEqual(k.calls, [{ index: 0, id: 'functions.search:0', name: 'search', args: '{"q": "x"}' }]);
  const h = run('harmony', 'gpt_oss', [
    '<|channel|>analysis<|message|>Use the tool.<|end|><|start|>assistant<|channel|>commentary to=functions.lookup <|constrain|>json<|message|>{"id": 7}<|call|>',
  ]);
  assert.equal(h.reasoning, 'Use the tool.');
  assert.deepEqual(h.calls.map((c) => [c.name, c.args]), [['lookup', '{"id": 7}']]);
});

test('PRE table: rows for the pair, PRE.1 special tokens, PRE.2 gates, PRE.3 prompt injection', () => {
  const rows = parserDecisions('harmony', 'gpt_oss');
  assert.deepEqual(rows.map((r) => [r.kind, r.parser, r.requires_special_tokens]), [['tool', 'harmony', true], ['reasoning', 'gpt_oss', true]]);
  for (const r of parserDecisions(null, null)) {
    for (const k of ['pre1', 'pre2', 'pre3', 'pre4', 'pre5', 'pre6'] as const) assert.ok(r[k].length > 0, `${r.parser} ${k}`);
  }
  assert.equal(requiresSpecialTokens('hermes', 'qwen3'), false);
  assert.equal(requiresSpecialTokens('kimi_k2', null), true);
  assert.equal(reasoningDisabledByRequest('kimi_k25', { thinking: 'false' }), true);
  assert.equal(reasoningDisabledByRequest('kimi_k25', {}), false);
  assert.equal(reasoningDisabledByRequest('nemotron_nano', { force_nonempty_content: true }), true);
  assert.equal(reasoningDisabledByRequest('mistral', null, 'high'), false);
  assert.equal(reasoningDisabledByRequest('mistral', null, null), true);
  assert.equal(promptInjectedReasoning('qwen3', '<|im_start|>assistant\n<think>\n'), true);
});

test('tool_choice named streams the arguments object as it arrives; PRE.6 strip', () => {
  const p = new OutputParser('hermes', null, { toolChoice: 'named', namedTool: 'get_weather', idSeed: 3 });
  const first = p.push('{"city": ');
  assert.ok(Array.isArray(first));
  assert.deepEqual((first as ParserDelta[]).map((d) => d.kind), ['tool_start', 'tool_args']);
  const m = run(null, 'nemotron_nano', ['<thi', 'nk>answer'], { idSeed: 1, reasoningDisabled: true } as never);
  assert.equal(m.content, 'answer');
  assert.throws(() => new OutputParser('hermes', null, { toolChoice: 'named' }), /namedTool/);
});
