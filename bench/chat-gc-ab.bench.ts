// V8's young-generation figures per unary 1-token chat, A/B between builds: bytes
// allocated and bytes promoted to the old generation per request, from `--trace-gc-nvp` on
// each build's one-shard `serve` (each scavenge's `allocated=` and `promoted=`) over the
// requests of one wrk run. Far steadier than CPU per request on a loaded machine: what a
// request allocates does not depend on the load, and what survives depends on it much less
// than CPU time does. Build directories as for chat-cpu-ab (bin/ dist/ with build/ native/
// node_modules/ linked; '.' is this repo); one shared out-of-process echo mock engine.
//
// Usage: npm run build:ts && node dist/bench/chat-gc-ab.bench.js <dirA> [more dirs...] [rounds=2] [seconds=5] [connections=64]
// BENCH_PIN=1: the frontend under test on CPU 0, engines and wrk on CPU 1 (wrk-harness.ts).
// Needs `wrk`.

import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { postScript, QWEN3, ROOT, startPortico, stopInOrder, uptime, wrk, ZERO_DELAY } from './wrk-harness.js';

const args = process.argv.slice(2);
const firstNumber = args.findIndex((a) => /^\d+$/.test(a));
const dirs = (firstNumber < 0 ? args : args.slice(0, firstNumber)).map((d) => resolvePath(d === '.' ? ROOT : d));
if (dirs.length === 0) dirs.push(ROOT);
const numbers = firstNumber < 0 ? [] : args.slice(firstNumber);
const rounds = Number(numbers[0] ?? 2);
const seconds = Number(numbers[1] ?? 5);
const connections = Number(numbers[2] ?? 64);
const names = dirs.map((_, i) => String.fromCharCode(65 + i));

const logDir = mkdtempSync(join(tmpdir(), 'portico-gc-'));
const engine = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', ...ZERO_DELAY]);
const worker = `grpc://127.0.0.1:${engine.port}`;

/** A serve whose stdout (the GC trace, and the line with its port) goes to a file. */
async function startTraced(dir: string, log: string) {
  const child = spawn(process.execPath, ['--trace-gc-nvp', `${dir}/bin/portico.js`, 'serve', '--host', '127.0.0.1', '--http-port', '0', '--model-path', QWEN3, '--model-name', 'models', '--worker', worker, '--shards', '1'], {
    stdio: ['ignore', openSync(log, 'w'), 'inherit'],
    env: { ...process.env, PORTICO_SHARDS: '1' },
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`serve in ${dir} exited ${code}`))));
  for (;;) {
    const m = /listening on [^:\s]+:\/\/[^:\s]+:(\d+)|listening on [^:\s]+:(\d+)/.exec(readFileSync(log, 'utf8'));
    if (m) return { child, port: Number(m[1] ?? m[2]) };
    await Promise.race([new Promise((r) => setTimeout(r, 50)), exited]);
  }
}

/** Sum of `key=` over the scavenges in `text`. */
function scavengeSum(text: string, key: string): { sum: number; count: number } {
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    if (!line.includes('gc=s ')) continue;
    count++;
    sum += Number(new RegExp(`\\b${key}=(\\d+)`).exec(line)?.[1] ?? 0);
  }
  return { sum, count };
}

const servers = [];
for (const [i, dir] of dirs.entries()) {
  const log = join(logDir, `${names[i]}.log`);
  servers.push({ name: names[i], dir, log, ...(await startTraced(dir, log)) });
}
const script = postScript({ model: 'models', messages: [{ role: 'user', content: 'Hello there, how are you today?' }], max_tokens: 1 });
console.log(`${dirs.map((d, i) => `${names[i]} = ${d}`).join('\n')}\n${rounds} rounds, wrk -t1 -c${connections} -d${seconds}s after a 2 s warm-up; load: ${uptime()}`);
console.log('| round | build | requests | scavenges | allocated / req | promoted / req |\n|---|---|---:|---:|---:|---:|');
const totals: Record<string, { req: number; alloc: number; promoted: number }> = Object.fromEntries(names.map((n) => [n, { req: 0, alloc: 0, promoted: 0 }]));
try {
  for (let r = 1; r <= rounds; r++) {
    for (const s of r % 2 ? servers : [...servers].reverse()) {
      const url = `http://127.0.0.1:${s.port}/v1/chat/completions`;
      wrk(url, { connections, seconds: 2, script });
      const before = readFileSync(s.log, 'utf8').length;
      const w = wrk(url, { connections, seconds, script });
      const text = readFileSync(s.log, 'utf8').slice(before);
      const alloc = scavengeSum(text, 'allocated');
      const promoted = scavengeSum(text, 'promoted');
      const t = totals[s.name];
      t.req += w.requests;
      t.alloc += alloc.sum;
      t.promoted += promoted.sum;
      console.log(`| ${r} | ${s.name} | ${w.requests} | ${alloc.count} | ${(alloc.sum / w.requests / 1024).toFixed(1)} KB | ${(promoted.sum / w.requests / 1024).toFixed(2)} KB |`);
    }
  }
  const a = totals.A;
  console.log(`all rounds, promoted / req: ${names.map((n) => `${n} ${(totals[n].promoted / totals[n].req / 1024).toFixed(2)} KB`).join(', ')}; ${names.slice(1).map((n) => `${n}/A ${(totals[n].promoted / totals[n].req / (a.promoted / a.req)).toFixed(2)}`).join(', ')}`);
  console.log(`all rounds, allocated / req: ${names.map((n) => `${n} ${(totals[n].alloc / totals[n].req / 1024).toFixed(1)} KB`).join(', ')}`);
  console.log(`load after: ${uptime()}`);
} finally {
  await stopInOrder([...servers.map((s) => s.child), engine.child]);
  rmSync(logDir, { recursive: true, force: true });
}
