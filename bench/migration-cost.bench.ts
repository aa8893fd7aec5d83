// What keeping a request migratable costs the request loop, in-process: runGeneration over an
// engine client that answers at once (one token, then done), with --migration-limit 0 and 3,
// CPU per request from process.cpuUsage. Run each setting in its own process (V8's state after
// one mode biases the other), alternating:
//
//   npm run build:ts && for l in 0 3 0 3; do node dist/bench/migration-cost.bench.js $l; done
//
// The per-token share (ids kept per choice) is measured end to end by
// `BENCH_ARGS_A='--migration-limit 0' BENCH_ARGS_B='--migration-limit 3' node dist/bench/stream-cpu-ab.bench.js . . 4 5 64 64`.

import { generationRequest } from '../src/pipeline/request.js';
import { runGeneration } from '../src/pipeline/run.js';
import type { Cancellation } from '../src/engine/types.js';
import { oneTokenModel } from './one-token-model.js';

const limit = Number(process.argv[2] ?? 3);
const model = oneTokenModel();
model.migration = { limit, maxSeqLen: 32768 };
const prompt = Uint32Array.from({ length: 20 }, (_, i) => 500 + i);
const never: Cancellation = { aborted: false, addEventListener() {}, removeEventListener() {} };
const one = (i: number) =>
  runGeneration(generationRequest({ model, promptIds: prompt, sampling: { n: 1, maxTokens: 1 }, maxTokens: 1, requestId: `r${i}`, signal: never, route: {}, arrived: performance.now(), skipSpecialTokens: true }), { event() {} });
for (let i = 0; i < 3000; i++) await one(i);
const N = 30000;
const t = process.cpuUsage();
for (let i = 0; i < N; i++) await one(i);
const u = process.cpuUsage(t);
console.log(`--migration-limit ${limit}: ${((u.user + u.system) / N).toFixed(2)} µs CPU per 1-token request`);
