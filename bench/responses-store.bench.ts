// The cost of one stored response: N puts of a typical response (a 5-item input, a 1 KB
// answer) into the SQLite store, on a file (WAL, synchronous=FULL: one fsync per put) run
// on the event loop and on the store thread (sqlite-thread.ts, what `serve` uses for a
// file), and in memory; then N chain lookups of 5-deep chains. Per call: wall time, the
// event loop's busy time (performance.eventLoopUtilization: what other requests wait for)
// and process CPU (all threads, process.cpuUsage()).
//   npm run build:ts && node dist/bench/responses-store.bench.js [n=500] [dir=/tmp]

import { mkdtempSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite.js';
import { SqliteThreadStore } from '../src/store/sqlite-thread.js';
import type { ResponseStore } from '../src/store/types.js';
import type { StoredResponse } from '../src/store/types.js';

const N = Number(process.argv[2] ?? 500);
const dir = mkdtempSync(join(process.argv[3] ?? '/tmp', 'portico-store-bench-'));

function response(i: number, prev: string | null): StoredResponse {
  const id = `resp_${i.toString(16).padStart(32, '0')}`;
  const input = Array.from({ length: 5 }, (_, j) => ({ id: `msg_${i}_${j}`, type: 'message', role: 'user', content: [{ type: 'input_text', text: `question ${j} `.repeat(8) }], status: 'completed' }));
  return { id, tenant: 't', model: 'm', previousId: prev, storedAt: 0, input, response: { id, object: 'response', output: [{ type: 'message', content: [{ type: 'output_text', text: 'x'.repeat(1024) }] }] } };
}

async function measure(name: string, s: ResponseStore) {
  let t = performance.now();
  let c = process.cpuUsage();
  let elu = performance.eventLoopUtilization();
  for (let i = 0; i < N; i++) await s.put(response(i, i % 5 === 0 ? null : `resp_${(i - 1).toString(16).padStart(32, '0')}`));
  let wall = (performance.now() - t) / N;
  let cpu = process.cpuUsage(c);
  let busy = performance.eventLoopUtilization(elu).active / N;
  console.log(`${name.padEnd(38)} put:   ${(wall * 1000).toFixed(0)} µs wall, ${(busy * 1000).toFixed(0)} µs event loop busy, ${((cpu.user + cpu.system) / N).toFixed(0)} µs CPU (all threads) per put`);
  t = performance.now();
  c = process.cpuUsage();
  elu = performance.eventLoopUtilization();
  for (let i = 0; i < N; i++) {
    const tail = Math.floor(i / 5) * 5 + 4;
    const ch = await s.chain('t', 'm', `resp_${Math.min(tail, N - 1).toString(16).padStart(32, '0')}`);
    if (ch.kind !== 'found') throw new Error(`chain ${ch.kind}`);
  }
  wall = (performance.now() - t) / N;
  cpu = process.cpuUsage(c);
  busy = performance.eventLoopUtilization(elu).active / N;
  console.log(`${name.padEnd(38)} chain: ${(wall * 1000).toFixed(0)} µs wall, ${(busy * 1000).toFixed(0)} µs event loop busy, ${((cpu.user + cpu.system) / N).toFixed(0)} µs CPU (all threads) per 5-deep lookup`);
  await s.close();
}

try {
  const policy = { ttlMs: 30 * 24 * 3600 * 1000, maxRows: 0 };
  await measure('file, on the event loop', new SqliteStore(join(dir, 'a.db'), policy));
  await measure('file, store thread (what serve uses)', await SqliteThreadStore.open(join(dir, 'b.db'), policy));
  await measure('memory', new SqliteStore(':memory:', policy));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
