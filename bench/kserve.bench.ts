// KServe v2 gRPC against HTTP on the same workload, same run: frontend CPU per
// request (utime + stime of the one-shard `serve` process, from /proc, over the requests
// made) and req/s. perf_analyzer is not installable here (PyPI `perf-analyzer` resolves to a
// 2 kB placeholder), so the gRPC load is this bounded equivalent: C concurrent callers on
// one HTTP/2 connection (a Connect gRPC client, as perf_analyzer's one channel), each making
// its share of N requests back to back; unary = ModelInfer, streaming = one ModelStreamInfer
// stream per caller carrying its requests one after another (stream true: a response per
// token, the last flagged final), as `perf_analyzer --streaming` drives a decoupled model.
// HTTP is wrk (-t1 -cC) on /v1/chat/completions and /v1/completions with the same prompt and
// max_tokens. One sim mock engine (zero delay, no EOS: every request runs to max_tokens) in
// its own process serves both faces. Loads go to 127.0.0.1 only.
//
// Usage: npm run build:ts && node dist/bench/kserve.bench.js [rounds=3] [requests=2000] [concurrency=32] [seconds=5]

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { create } from '@bufbuild/protobuf';
import { GRPCInferenceService, ModelInferRequestSchema, type ModelInferRequest } from '../src/gen/kserve/grpc_service_pb.js';
import { cpuMsOf, postScript, QWEN3, ROOT, startPortico, stopInOrder, uptime, wrk, ZERO_DELAY } from './wrk-harness.js';

const rounds = Number(process.argv[2] ?? 3);
const requests = Number(process.argv[3] ?? 2000);
const concurrency = Number(process.argv[4] ?? 32);
const seconds = Number(process.argv[5] ?? 5);
const PROMPT = 'Hello there, how are you today?';

const engine = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--mode', 'sim', ...ZERO_DELAY, '--eos-probability', '0', '--max-num-seqs', '4096']);
const serve = spawn(process.execPath, [`${ROOT}bin/portico.js`, 'serve', '--host', '127.0.0.1', '--http-port', '0', '--grpc-port', '0', '--model-path', QWEN3, '--model-name', 'm', '--worker', `grpc://127.0.0.1:${engine.port}`, '--shards', '1'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
serve.stdout!.on('data', (d: Buffer) => (out += d.toString()));
while (!/KServe gRPC listening on \S+:(\d+)/.test(out)) await once(serve.stdout!, 'data');
const httpPort = Number(/listening on http:\/\/\S+:(\d+)/.exec(out)![1]);
const grpcPort = Number(/KServe gRPC listening on \S+:(\d+)/.exec(out)![1]);
const client = createClient(GRPCInferenceService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${grpcPort}` }));

function inferRequest(maxTokens: number, stream: boolean): ModelInferRequest {
  const inputs = [
    { name: 'text_input', datatype: 'BYTES', shape: [1n], contents: { bytesContents: [Buffer.from(PROMPT)] } },
    { name: 'max_tokens', datatype: 'INT32', shape: [1n], contents: { intContents: [maxTokens] } },
  ];
  if (stream) inputs.push({ name: 'stream', datatype: 'BOOL', shape: [1n], contents: { boolContents: [true] } } as never);
  return create(ModelInferRequestSchema, { modelName: 'm', inputs: inputs as never });
}

/** N unary ModelInfer calls from C callers; returns the requests made and the seconds taken. */
async function grpcUnary(n: number, maxTokens: number): Promise<{ requests: number; secs: number }> {
  const req = inferRequest(maxTokens, false);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, c) => {
      for (let i = c; i < n; i += concurrency) {
        const res = await client.modelInfer(req);
        if (res.outputs.length !== 2) throw new Error('unexpected response');
      }
    }),
  );
  return { requests: n, secs: (performance.now() - t0) / 1000 };
}

/** N streamed requests from C callers, each on its own ModelStreamInfer stream, one request at a time. */
async function grpcStream(n: number, maxTokens: number): Promise<{ requests: number; secs: number; responses: number }> {
  const req = inferRequest(maxTokens, true);
  let responses = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, c) => {
      const mine = Math.floor(n / concurrency) + (c < n % concurrency ? 1 : 0);
      const waiting: { wake: (() => void) | null } = { wake: null };
      let finals = 0;
      // The stream's input: the next request once the previous one's final response came.
      async function* input() {
        for (let k = 0; k < mine; k++) {
          yield req;
          while (finals <= k) await new Promise<void>((r) => (waiting.wake = r));
        }
      }
      for await (const r of client.modelStreamInfer(input())) {
        responses++;
        if (r.errorMessage) throw new Error(r.errorMessage);
        const p = r.inferResponse!.parameters.triton_final_response?.parameterChoice;
        if (p?.case === 'boolParam' && p.value) {
          finals++;
          const w = waiting.wake;
          waiting.wake = null;
          w?.();
        }
      }
    }),
  );
  return { requests: n, secs: (performance.now() - t0) / 1000, responses };
}

const pid = serve.pid!;
type Row = { name: string; rps: number; cpuUs: number };
const results = new Map<string, number[]>();
const row = (r: Row) => {
  results.set(r.name, [...(results.get(r.name) ?? []), r.cpuUs]);
  console.log(`| ${r.name} | ${Math.round(r.rps)} | ${Math.round(r.cpuUs)} µs |`);
};

async function measureGrpc(name: string, run: () => Promise<{ requests: number; secs: number }>): Promise<void> {
  const c0 = cpuMsOf(pid);
  const r = await run();
  row({ name, rps: r.requests / r.secs, cpuUs: ((cpuMsOf(pid) - c0) * 1000) / r.requests });
}

function measureWrk(name: string, path: string, body: object): void {
  const url = `http://127.0.0.1:${httpPort}${path}`;
  const script = postScript(body);
  const c0 = cpuMsOf(pid);
  const w = wrk(url, { connections: concurrency, seconds, script });
  row({ name, rps: w.rps, cpuUs: ((cpuMsOf(pid) - c0) * 1000) / w.requests });
}

const chat = (maxTokens: number, stream: boolean) => ({ model: 'm', messages: [{ role: 'user', content: PROMPT }], max_tokens: maxTokens, stream });
const completion = (maxTokens: number, stream: boolean) => ({ model: 'm', prompt: PROMPT, max_tokens: maxTokens, stream });

console.log(`${rounds} rounds; gRPC: ${requests} requests from ${concurrency} callers on one HTTP/2 connection; HTTP: wrk -t1 -c${concurrency} -d${seconds}s; load: ${uptime()}`);
try {
  // Warm-up: JIT and connections.
  await grpcUnary(500, 1);
  await grpcStream(200, 16);
  wrk(`http://127.0.0.1:${httpPort}/v1/chat/completions`, { connections: concurrency, seconds: 2, script: postScript(chat(1, false)) });
  for (let r = 1; r <= rounds; r++) {
    console.log(`\nround ${r}\n| workload | req/s | frontend CPU / req |\n|---|---:|---:|`);
    await measureGrpc('gRPC ModelInfer, 1 token', () => grpcUnary(requests, 1));
    measureWrk('HTTP chat, 1 token', '/v1/chat/completions', chat(1, false));
    measureWrk('HTTP completions, 1 token', '/v1/completions', completion(1, false));
    await measureGrpc('gRPC ModelStreamInfer, 64 tokens streamed', () => grpcStream(Math.max(concurrency, Math.floor(requests / 4)), 64));
    measureWrk('HTTP chat stream, 64 tokens', '/v1/chat/completions', chat(64, true));
    measureWrk('HTTP completions stream, 64 tokens', '/v1/completions', completion(64, true));
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log('\nmedian frontend CPU per request:');
  for (const [name, xs] of results) console.log(`- ${name}: ${Math.round(med(xs))} µs`);
  console.log(`load after: ${uptime()}`);
} finally {
  await stopInOrder([serve, engine.child]);
}
