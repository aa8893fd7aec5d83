// What a 1-token chat allocates on the frontend's JS heap, and where. A sim engine and a
// one-shard Portico run as separate processes; after a warm-up, V8's sampling heap profiler
// (bench/alloc-sampler.ts, collected objects counted) runs over N requests sent one at a
// time. Prints bytes per request, the allocating functions, and the same bytes charged to the
// nearest Portico function on each allocation's stack (so Node's and the libraries' objects
// are charged to the code that asked for them). Bytes are deterministic enough to compare
// builds one after the other; CPU is not read here. ALLOC_SAMPLE_LIVE=1: only what is still
// alive after the last request (what requests leave behind: caches, indexes, leaks);
// ALLOC_SAMPLE_SURVIVORS=1: what a scavenge found alive (what makes scavenges cost: copied or
// promoted, whether a full GC took it later or not).
//
// Usage: npm run build:ts && node dist/bench/alloc-per-request.bench.js [requests=2000] [warmup=6000] [top=25]

import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startPair } from './serve-procs.js';

const requests = Number(process.argv[2] ?? 2000);
const warmup = Number(process.argv[3] ?? 6000);
const top = Number(process.argv[4] ?? 25);
const out = join(tmpdir(), `portico-alloc-${process.pid}.json`);
process.env.ALLOC_SAMPLE_OUT = out;

// ALLOC_NODE_ARGS: node options for the server (space-separated), for A/Bs of V8 flags.
const nodeArgs = (process.env.ALLOC_NODE_ARGS ?? '').split(' ').filter(Boolean);
const pair = await startPair(['--mode', 'sim', '--speedup-ratio', '1000000', '--eos-probability', '0'], [], [...nodeArgs, '--import', `${ROOT}dist/bench/alloc-sampler.js`]);
const words = ['river', 'stone', 'lamp', 'orbit', 'cedar', 'quartz', 'harbor', 'meadow', 'signal', 'copper', 'window', 'thunder'];
const bodyOf = (i: number) =>
  JSON.stringify({ model: 'm', messages: [{ role: 'user', content: Array.from({ length: 24 }, (_, k) => words[(i * 7 + k * 5) % words.length]).join(' ') }], max_tokens: 1, ignore_eos: true });
const chat = async (i: number) => {
  const res = await fetch(`${pair.base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodyOf(i) });
  await res.text();
  if (!res.ok) throw new Error(`status ${res.status}`);
};

let next = 0;
await Promise.all(Array.from({ length: 16 }, async () => {
  while (next < warmup) await chat(next++);
}));

let p = pair.server.waitProbe();
pair.server.child.kill('SIGUSR2');
await p;
for (let i = 0; i < requests; i++) await chat(warmup + i);
p = pair.server.waitProbe();
pair.server.child.kill('SIGUSR2');
const { bytes } = await p;
pair.close();

interface Frame { functionName: string; url: string; lineNumber: number }
interface Node { callFrame: Frame; selfSize: number; children: Node[] }
const head = JSON.parse(readFileSync(out, 'utf8')) as Node;
const name = (f: Frame) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^file:\/\/.*?\/(dist|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
const ours = (f: Frame) => f.url.includes('/dist/src/');
const self = new Map<string, number>();
const charged = new Map<string, number>();
const walk = (n: Node, nearest: string) => {
  const here = name(n.callFrame);
  const owner = ours(n.callFrame) ? here : nearest;
  if (n.selfSize > 0) {
    self.set(here, (self.get(here) ?? 0) + n.selfSize);
    charged.set(owner, (charged.get(owner) ?? 0) + n.selfSize);
  }
  for (const c of n.children) walk(c, owner);
};
walk(head, '(outside Portico)');

const table = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(v / requests).toFixed(0).padStart(7)}  ${k}`);
};
const what = process.env.ALLOC_SAMPLE_LIVE === '1' ? 'still alive after the last request' : process.env.ALLOC_SAMPLE_SURVIVORS === '1' ? 'found alive by a scavenge' : 'allocated';
console.log(`${requests} requests one at a time after ${warmup} warm-up: ${(bytes / requests).toFixed(0)} bytes ${what} per request (sampling interval ${process.env.ALLOC_SAMPLE_INTERVAL ?? 256} B)`);
table('bytes/request by allocating function', self);
table('bytes/request charged to the nearest Portico function', charged);
