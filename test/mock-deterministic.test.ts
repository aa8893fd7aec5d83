// The mock engine's deterministic mode (src/mock/script.ts): each token a pure function of the
// ids before it. Continuing a run from any split point as prompt + generated ids, with the rest
// of its budget, gives exactly the rest of the whole run: what request migration relies on.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Model } from '../src/native/core.js';
import { DeterministicTokens, toolNames, type ScriptTokenizer } from '../src/mock/script.js';
import { ChoiceGenerator, type ChoiceConfig } from '../src/mock/token-policy.js';
import { createSimCore } from '../src/mock/engine-server.js';
import type { CoreOutput } from '../src/mock/sim-core.js';
import { QWEN3 } from './helpers/portico.js';

const model = Model.load(QWEN3);
const info = model.info();
const tokenizer: ScriptTokenizer = {
  encode: (t) => model.encode(t, false),
  decode: (ids) => model.decode(Uint32Array.from(ids), false),
  tokenToId: (t) => model.tokenToId(t),
};
const EOS = info.eosTokenIds;

const TOOLS = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { name: { type: 'string' } } } } },
  { type: 'function', function: { name: 'search_docs', parameters: { type: 'object', properties: {} } } },
];

/** A Qwen3 chat prompt as the template renders it (tools in the system turn). */
function chatPrompt(user: string, tools = true): number[] {
  const sys = tools
    ? `<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n${TOOLS.map((t) => JSON.stringify(t)).join('\n')}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n`
    : '';
  return Array.from(model.encode(`${sys}<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`, false));
}

function config(prompt: number[], over: Partial<ChoiceConfig> = {}): ChoiceConfig {
  return {
    mode: 'sim',
    prompt,
    maxNewTokens: 400,
    minNewTokens: 0,
    stopTokenIds: new Set(),
    eosTokenIds: EOS,
    ignoreEos: false,
    drawBound: Math.min(...EOS),
    eosProbability: 0.05,
    seed: 12345,
    deterministic: new DeterministicTokens({ eosTokenIds: EOS, drawBound: Math.min(...EOS), eosProbability: 0.05, tokenizer }),
    ...over,
  };
}

function run(cfg: ChoiceConfig): { ids: number[]; finish: ChoiceGenerator['finish'] } {
  const g = new ChoiceGenerator(cfg);
  while (!g.finish) g.step();
  return { ids: g.output, finish: g.finish };
}

/** Every split point: the prompt + the first k ids, with the rest of the budget, continues as the whole run did. */
function assertContinuable(cfg: ChoiceConfig, what: string): void {
  const whole = run(cfg);
  for (let k = 1; k < whole.ids.length; k++) {
    const rest = run({
      ...cfg,
      prompt: [...cfg.prompt, ...whole.ids.slice(0, k)],
      maxNewTokens: cfg.maxNewTokens - k,
      minNewTokens: Math.max(cfg.minNewTokens - k, 0),
      seed: k * 7919, // nothing per request matters
      deterministic: new DeterministicTokens({ eosTokenIds: EOS, drawBound: cfg.drawBound, eosProbability: cfg.eosProbability, tokenizer: cfg.deterministic ? tokenizer : undefined }),
    });
    assert.deepEqual(rest.ids, whole.ids.slice(k), `${what}: continued after ${k} of ${whole.ids.length}`);
    assert.deepEqual(rest.finish, whole.finish, `${what}: same finish after ${k}`);
  }
}

test('a run continued from any split point equals the whole run, tools or not, EOS and limits included', () => {
  for (let i = 0; i < 12; i++) assertContinuable(config(chatPrompt(`question number ${i}`, i % 3 !== 2)), `prompt ${i}`);
  // Raw prompts (no chat turn), the token limit, min_tokens holding EOS back, ignore_eos.
  assertContinuable(config(Array.from(model.encode('Once upon a time', false))), 'raw prompt');
  assertContinuable(config(chatPrompt('short'), { maxNewTokens: 9 }), 'max tokens');
  assertContinuable(config(chatPrompt('long one'), { minNewTokens: 120, maxNewTokens: 200 }), 'min tokens');
  assertContinuable(config(chatPrompt('ignore'), { ignoreEos: true, maxNewTokens: 150 }), 'ignore_eos');
  const comma = model.encode(',', false)[0]!;
  assertContinuable(config(chatPrompt('stop ids'), { stopTokenIds: new Set([comma, 13]) }), 'stop ids');
});

test('without a tokenizer the ids are hashed from the history, still continuable', () => {
  const hashed = (prompt: number[]) => config(prompt, { deterministic: new DeterministicTokens({ eosTokenIds: EOS, drawBound: 1000, eosProbability: 0.05 }), drawBound: 1000 });
  for (let i = 0; i < 6; i++) {
    const cfg = hashed([i, 17, 99, 4 + i]);
    const whole = run(cfg);
    assert.ok(whole.ids.every((t) => t < 1000 || EOS.includes(t)));
    for (let k = 1; k < whole.ids.length; k++) {
      const rest = run({ ...cfg, prompt: [...cfg.prompt, ...whole.ids.slice(0, k)], maxNewTokens: cfg.maxNewTokens - k });
      assert.deepEqual(rest.ids, whole.ids.slice(k));
    }
  }
});

test('the script has a reasoning block, an answer and, with tools declared, calls to them; nothing depends on the seed', () => {
  let calls = 0;
  const names = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const prompt = chatPrompt(`what about ${i}?`);
    const a = run(config(prompt, { seed: 1 }));
    const b = run(config(prompt, { seed: 2 }));
    assert.deepEqual(a, b, 'the seed does not matter');
    assert.deepEqual(a.finish, { reason: 'stop', matchedTokenId: EOS[0] });
    const text = model.decode(Uint32Array.from(a.ids), false);
    assert.match(text, /^<think>\n[a-z ]+\n<\/think>\n\n[A-Z][a-z ]+\./);
    const call = /<tool_call>\n(\{.*\})\n<\/tool_call><\|im_end\|>$/.exec(text);
    if (call) {
      calls++;
      const parsed = JSON.parse(call[1]!) as { name: string; arguments: { query: string; limit: number } };
      names.add(parsed.name);
      assert.ok(['get_weather', 'search_docs'].includes(parsed.name));
    }
    const plain = model.decode(Uint32Array.from(run(config(chatPrompt(`what about ${i}?`, false))).ids), false);
    assert.doesNotMatch(plain, /<tool_call>/, 'no tools, no call');
  }
  assert.ok(calls >= 5 && calls <= 18, `some scripts call a tool (${calls} of 20)`);
  assert.equal(names.size, 2, 'both declared tools are called');
  assert.deepEqual(toolNames(`<tools>\n${TOOLS.map((t) => JSON.stringify(t)).join('\n')}\n</tools>`), ['get_weather', 'search_docs']);
});

test('through the simulator: n choices agree, and a continuation request gives the rest of the run', async () => {
  const core = createSimCore({ port: 0, mode: 'sim', eosTokenIds: EOS, vocabSize: info.vocabSize, stepMs: 0, prefillMsPerToken: 0, decodeMsPerSeq: 0, decodeMsPerKvToken: 0, prefillAttnMsPerTokenCtx: 0, deterministic: true, tokenizer, seed: 99 });
  const collect = (id: string, prompt: number[], n: number, max?: number) =>
    new Promise<number[][]>((resolve) => {
      const out: number[][] = Array.from({ length: n }, () => []);
      let open = n;
      core.submit({ id, prompt, n, maxNewTokens: max, minNewTokens: 0, stopTokenIds: [], ignoreEos: false }, (o: CoreOutput) => {
        if (o.kind === 'tokens') out[o.index]!.push(...o.tokenIds);
        else if (--open === 0) resolve(out);
      });
    });
  try {
    const prompt = chatPrompt('through the core');
    const [a, b] = await collect('r1', prompt, 2, 300);
    assert.deepEqual(a, b);
    const [rest] = await collect('r2', [...prompt, ...a!.slice(0, 10)], 1, 290);
    assert.deepEqual(rest, a!.slice(10));
  } finally {
    core.close();
  }
});
