// What keeping a request migratable costs the request loop, in-process: runGeneration over an
// engine client that answers at once (one token, then done), with --migration-limit 0 and 3,
// CPU per request from process.cpuUsage. Run each setting in its own process (V8's state after
// one mode biases the other), alternating:
//
//   npm run build:ts && for l in 0 3 0 3; do node dist/bench/migration-cost.bench.js $l; done
//
// The per-token share (ids kept per choice) is measured end to end by
// `BENCH_ARGS_A='--migration-limit 0' BENCH_ARGS_B='--migration-limit 3' node dist/bench/stream-cpu-ab.bench.js . . 4 5 64 64`.

import { Model } from '../src/native/core.js';
import { WorkerPool } from '../src/router/worker-pool.js';
import { ModelRouter } from '../src/router/router.js';
import { ServedModel } from '../src/pipeline/served-model.js';
import { generationRequest } from '../src/pipeline/request.js';
import { runGeneration } from '../src/pipeline/run.js';
import { FrontendMetrics, modelStats } from '../src/metrics/frontend.js';
import type { Cancellation, EngineClient, EngineEvent, GenerateParams } from '../src/engine/types.js';
import { QWEN3 } from './wrk-harness.js';

const limit = Number(process.argv[2] ?? 3);
const events = (p: GenerateParams): EngineEvent[] => [
  { kind: 'chunk', chunk: { tokenIds: [1000], promptTokens: p.inputIds.length, completionTokens: 1, cachedTokens: 0, index: 0 } },
  { kind: 'done', done: { finishReason: 'length', promptTokens: p.inputIds.length, completionTokens: 1, cachedTokens: 0, index: 0, outputIds: [] } },
];
const client = {
  url: 'grpc://bench:1',
  health: async () => true,
  serverInfo: async () => ({ maxTotalNumTokens: 1e6, serverArgs: {}, disaggregation: { role: null } }),
  close() {},
  generate(p: GenerateParams): AsyncIterable<EngineEvent> {
    const evs = events(p);
    let i = 0;
    return {
      [Symbol.asyncIterator]() {
        return {
          next: async () => (i < evs.length ? { value: evs[i++]!, done: false } : { value: undefined, done: true }),
          return: async () => ({ value: undefined, done: true }),
        } as AsyncIterator<EngineEvent>;
      },
    };
  },
} as unknown as EngineClient;
const pool = new WorkerPool([client], { model: 'm' });
for (const w of pool.workers) w.healthy = true;
const model = new ServedModel('m', Model.load(QWEN3), pool, new ModelRouter(pool, { mode: 'round-robin' }), modelStats(new FrontendMetrics(), 'm'));
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
