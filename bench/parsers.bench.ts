// Parser benchmark: throughput per family (MB/s) and per-token streaming overhead.
//   npm run build:ts && node dist/bench/parsers.bench.js
// Each family parses a ~64 KB output: narration and one-line tool calls in its own format
// (reasoning parsers: a long reasoning block, then the answer). "stream" pushes 4-byte
// chunks (≈ one token each) through the N-API binding, as the request path does;
// "batch" pushes the whole text once. Per-token overhead = time per push in stream mode.
import os from 'node:os';
import { OutputParser } from '../src/native/parsers.js';

const WEATHER = '{"location": "Tokyo", "unit": "celsius", "days": 3}';
const NARRATION = 'The user asks about the weather in several cities, so I will call the tool for each one. ';

const FAMILIES: [string, string | null, string | null, string][] = [
  ['plain content (hermes)', 'hermes', null, NARRATION],
  ['hermes', 'hermes', null, `${NARRATION}<tool_call>\n{"name": "get_weather", "arguments": ${WEATHER}}\n</tool_call>\n`],
  ['qwen3_coder', 'qwen3_coder', null, `${NARRATION}<tool_call>\n<function=get_weather>\n<parameter=location>\nTokyo\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n`],
  ['llama3_json', 'llama3_json', null, `{"name": "get_weather", "parameters": ${WEATHER}}; `],
  ['mistral', 'mistral', null, `${NARRATION}[TOOL_CALLS]get_weather[ARGS]${WEATHER}`],
  ['deepseek_v3', 'deepseek_v3', null, `${NARRATION}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n\`\`\`json\n${WEATHER}\n\`\`\`<｜tool▁call▁end｜><｜tool▁calls▁end｜>`],
  ['deepseek_v3_1', 'deepseek_v3_1', null, `${NARRATION}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>${WEATHER}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`],
  ['deepseek_v4 (DSML)', 'deepseek_v4', null, `${NARRATION}<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="location" string="true">Tokyo</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>`],
  ['kimi_k2', 'kimi_k2', null, `${NARRATION}<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>${WEATHER}<|tool_call_end|><|tool_calls_section_end|>`],
  ['glm47', 'glm47', null, `${NARRATION}<tool_call>get_weather<arg_key>location</arg_key><arg_value>Tokyo</arg_value></tool_call>`],
  ['minimax_m2', 'minimax_m2', null, `${NARRATION}<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="location">Tokyo</parameter>\n</invoke>\n</minimax:tool_call>`],
  ['pythonic', 'pythonic', null, '[get_weather(location="Tokyo", days=3)] '],
  ['gemma4', 'gemma4', null, `${NARRATION}<|tool_call>call:get_weather{location:<|"|>Tokyo<|"|>,days:3}<tool_call|>`],
  ['harmony + gpt_oss', 'harmony', 'gpt_oss', `<|channel|>analysis<|message|>${NARRATION}<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>${WEATHER}<|call|>`],
  ['reasoning: qwen3', null, 'qwen3', `<think>${NARRATION.repeat(8)}</think>${NARRATION}`],
  ['reasoning: deepseek_r1 + deepseek_v3', 'deepseek_v3', 'deepseek_r1', `${NARRATION.repeat(8)}</think>${NARRATION}`],
];

const TARGET = 64 * 1024;

function build(unit: string): string {
  let s = '';
  while (Buffer.byteLength(s) < TARGET) s += unit;
  return s;
}

function chunks(s: string, n: number): string[] {
  const out: string[] = [];
  const cps = Array.from(s);
  for (let i = 0; i < cps.length; i += n) out.push(cps.slice(i, i + n).join(''));
  return out;
}

function time(fn: () => void, minMs = 300): number {
  fn(); // warm up
  let runs = 0;
  const t0 = process.hrtime.bigint();
  let el = 0;
  while (el < minMs * 1e6) {
    fn();
    runs++;
    el = Number(process.hrtime.bigint() - t0);
  }
  return el / runs; // ns per run
}

console.log(`node ${process.version}, ${os.cpus()[0]?.model ?? '?'} x${os.cpus().length}, load ${os.loadavg()[0].toFixed(1)}`);
console.log('| family | MB/s batch | MB/s stream (4-char pushes) | ns/push (stream) | calls |');
console.log('|---|---:|---:|---:|---:|');
for (const [label, tool, reasoning, unit] of FAMILIES) {
  // the reasoning-only cases are one block: repeat whole outputs instead
  const text = reasoning && !tool ? unit : build(unit);
  const reps = reasoning && !tool ? Math.ceil(TARGET / Buffer.byteLength(unit)) : 1;
  const bytes = Buffer.byteLength(text) * reps;
  const parts = chunks(text, 4);
  let calls = 0;
  const batchNs = time(() => {
    for (let r = 0; r < reps; r++) {
      const p = new OutputParser(tool, reasoning);
      p.pushRaw(text);
      p.finish();
      calls = p.toolCallCount;
    }
  });
  const streamNs = time(() => {
    for (let r = 0; r < reps; r++) {
      const p = new OutputParser(tool, reasoning);
      for (const c of parts) p.pushRaw(c);
      p.finish();
    }
  });
  const mbs = (ns: number) => ((bytes / (ns / 1e9)) / 1e6).toFixed(1);
  console.log(`| ${label} | ${mbs(batchNs)} | ${mbs(streamNs)} | ${(streamNs / (parts.length * reps)).toFixed(0)} | ${calls * reps} |`);
}

// Per-token overhead against the cost of merely crossing N-API with a string.
const tok = ' token';
const N = 200_000;
function perToken(tool: string | null, reasoning: string | null): number {
  const p = new OutputParser(tool, reasoning, reasoning ? { promptInjectedReasoning: true } : undefined);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) p.pushRaw(tok);
  return Number(process.hrtime.bigint() - t0) / N;
}
perToken('hermes', null);
console.log('');
console.log('| per-token push (" token", 200k pushes) | ns/token |');
console.log('|---|---:|');
console.log(`| no parsers (binding round trip) | ${perToken(null, null).toFixed(0)} |`);
console.log(`| hermes, content | ${perToken('hermes', null).toFixed(0)} |`);
console.log(`| qwen3_coder, content | ${perToken('qwen3_coder', null).toFixed(0)} |`);
console.log(`| qwen3 + hermes, inside reasoning (array result) | ${perToken('hermes', 'qwen3').toFixed(0)} |`);
// Inside a streamed tool call's arguments: every push returns an arguments fragment
// (array result). The pieces include `}` / `]` of nested values.
const ARG_PIECES = [' "k', 'ey"', ': ', '[1', ', {"', 'a": ', '2.5', '}], ', '"s": "', 'some', ' text', '", '];
function perArgToken(tool: string | null, prefix: string, opts?: ConstructorParameters<typeof OutputParser>[2]): string {
  const p = new OutputParser(tool, null, opts);
  p.pushRaw(prefix);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) p.pushRaw(ARG_PIECES[i % ARG_PIECES.length]);
  return (Number(process.hrtime.bigint() - t0) / N).toFixed(0);
}
console.log(`| hermes, inside streamed arguments (array result) | ${perArgToken('hermes', '<tool_call>\n{"name": "f", "arguments": {')} |`);
console.log(`| kimi_k2, inside streamed arguments | ${perArgToken('kimi_k2', '<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{')} |`);
console.log(`| tool_choice required, inside streamed arguments | ${perArgToken(null, '[{"name": "f", "parameters": {', { toolChoice: 'required' })} |`);
console.log(`| harmony + gpt_oss, final channel content | ${(() => {
  const p = new OutputParser('harmony', 'gpt_oss');
  p.pushRaw('<|channel|>final<|message|>');
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) p.pushRaw(tok);
  return (Number(process.hrtime.bigint() - t0) / N).toFixed(0);
})()} |`);
