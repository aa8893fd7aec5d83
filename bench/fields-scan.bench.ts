// What reading a request's top-level fields costs (src/protocol/fields.ts): readChatRequest of
// a one-message chat, and the two per-object allocations a Fields makes, as typed arrays
// against plain arrays of numbers (what fields.ts uses): the table-index slots (70 for the chat
// table) and the copy of the gate's records (3 members here, 8 doubles each). benchmark.js.
//
// Run: npm run build:ts && node dist/bench/fields-scan.bench.js

import Benchmark from 'benchmark';

import { readChatRequest } from '../src/protocol/chat-request.js';

const body = Buffer.from('{"model":"models","messages":[{"role":"user","content":"Hello there, how are you today?"}],"max_tokens":1}');
const scratch = new Float64Array(512 * 8).map((_, i) => i);
const SLOTS = 70;
const RECORDS = 3 * 8;
let keep: unknown;

await new Promise<void>((resolve) => {
  new Benchmark.Suite('fields')
    .add('readChatRequest, one-message chat', () => {
      keep = readChatRequest(body, false, () => '');
    })
    .add('slots as Int32Array(70).fill(-1) (before)', () => {
      keep = new Int32Array(SLOTS).fill(-1);
    })
    .add('slots as Array(70).fill(-1) (now)', () => {
      keep = new Array<number>(SLOTS).fill(-1);
    })
    .add('records as scratch.slice(0, 24) (before)', () => {
      keep = scratch.slice(0, RECORDS);
    })
    .add('records copied into an array (now)', () => {
      const a = new Array<number>(RECORDS);
      for (let i = 0; i < RECORDS; i++) a[i] = scratch[i]!;
      keep = a;
    })
    .on('cycle', (e: Benchmark.Event) => {
      const t = e.target as Benchmark.Target & { stats: { mean: number; rme: number } };
      console.log(`${t.name}: ${(t.stats.mean * 1e9).toFixed(0)} ns (±${t.stats.rme.toFixed(1)} %)`);
    })
    .on('complete', () => resolve())
    .run();
});
if (keep === undefined) throw new Error('nothing built');
