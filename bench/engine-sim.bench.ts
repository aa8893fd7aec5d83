// Engine simulator and KV-event ingestion figures.
//
//   npm run build:ts && node dist/bench/engine-sim.bench.js [--quick]
//
// 1. streams: one simulator process (a child, so its CPU is its own) holds
//    256 concurrent streams paced at 50 tokens/s each (20 ms decode steps,
//    speedup 1); the client here counts tokens. Reported: aggregate and
//    per-stream token rates, the simulator process's CPU use.
// 2. sim-rps: the same child at speedup 1000, 256 concurrent requests of
//    512 prompt tokens (half shared prefix) and 64 output tokens, over gRPC:
//    simulated requests/s and tokens/s.
// 3. core: the simulator core alone (no gRPC), speedup 1e6: requests/s.
// 4. kv-grpc / kv-zmq: KV-event ingestion, publisher and subscriber in this
//    process: 1-block stored events in batches of 32 pushed through the
//    SubscribeKvEvents stream (GrpcKvEventSubscriber → KvBlockSet) and
//    through ZMQ (ZmqKvEventSubscriber, map layout, → KvBlockSet).
// 5. kv-decode: normaliseBatch over protobuf batches and decodeVllmBatch
//    over msgpack batches, no transport.

import { spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';

import { toBinary, fromBinary } from '@bufbuild/protobuf';

import { createEngineClient } from '../src/engine/factory.js';
import { decodeVllmBatch, GrpcKvEventSubscriber, KvBlockSet, normaliseBatch, ZmqKvEventSubscriber } from '../src/engine/kv-events/index.js';
import type { EngineClient } from '../src/engine/types.js';
import { KvEventBatchSchema } from '../src/gen/common_pb.js';
import { createSimCore, startMockEngine, type MockEngineOptions } from '../src/mock/engine-server.js';
import type { HubBatch } from '../src/mock/kv-event-hub.js';
import { toProto } from '../src/mock/kv-events-rpc.js';
import { encodeBatch } from '../src/mock/zmq-publisher.js';
import { lineReader, ROOT } from './serve-procs.js';

const quick = process.argv.includes('--quick');
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

const CHILD = `
import { startMockEngine } from './dist/src/mock/engine-server.js';
const m = await startMockEngine(JSON.parse(process.argv[1]));
console.log(m.port);
let last = process.cpuUsage();
let lastT = performance.now();
process.stdin.setEncoding('utf8');
process.stdin.on('data', () => {
  const u = process.cpuUsage(last);
  const t = performance.now();
  console.log(JSON.stringify({ cpuMs: (u.user + u.system) / 1000, wallMs: t - lastT, tokensOut: m.core.tokensOut }));
  last = process.cpuUsage();
  lastT = t;
});
process.stdin.on('end', () => m.close().then(() => process.exit(0)));
`;

async function startChild(o: MockEngineOptions) {
  const child = spawn(process.execPath, [...(process.env.SIM_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/simprof'] : []), '--input-type=module', '-e', CHILD, JSON.stringify(o)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const next = lineReader(child.stdout!);
  const port = Number(await next());
  return {
    port,
    /** CPU ms and wall ms since the previous call. */
    async cpu(): Promise<{ cpuMs: number; wallMs: number; tokensOut: number }> {
      child.stdin!.write('x');
      return JSON.parse(await next()) as { cpuMs: number; wallMs: number; tokensOut: number };
    },
    async stop() {
      child.stdin!.end();
      await new Promise((r) => child.once('exit', r));
    },
  };
}

async function drain(client: EngineClient, id: string, prompt: Uint32Array, maxNewTokens: number, count: (k: number) => void, signal: AbortSignal) {
  try {
    for await (const ev of client.generate({ requestId: id, inputIds: prompt, maxNewTokens, stream: true, ignoreEos: true }, signal)) {
      if (ev.kind === 'chunk') count(ev.chunk.tokenIds.length);
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}

async function streams() {
  const N = 256;
  const seconds = quick ? 4 : 10;
  const child = await startChild({
    port: 0, mode: 'sim', eosTokenIds: [151645], vocabSize: 151936, eosProbability: 0,
    stepMs: 20, prefillMsPerToken: 0.001, decodeMsPerSeq: 0, decodeMsPerKvToken: 0, prefillAttnMsPerTokenCtx: 0,
    maxRunningRequests: N,
  });
  const client = createEngineClient(`grpc://127.0.0.1:${child.port}`);
  const ac = new AbortController();
  setMaxListeners(0, ac.signal); // one signal for all 256 streams
  let tokens = 0;
  const perStream = new Array<number>(N).fill(0);
  const jobs = Array.from({ length: N }, (_, i) => drain(client, `s${i}`, Uint32Array.from({ length: 128 }, (_, k) => (i * 131 + k) % 50000), 1_000_000, (k) => {
    tokens += k;
    perStream[i]! += k;
  }, ac.signal));
  await new Promise((r) => setTimeout(r, 1500)); // warm up: all streams running
  tokens = 0;
  perStream.fill(0);
  const before = await child.cpu();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const { cpuMs, wallMs, tokensOut } = await child.cpu();
  const secs = (performance.now() - t0) / 1000;
  const rates = perStream.map((x) => x / secs).sort((a, b) => a - b);
  ac.abort();
  await Promise.all(jobs);
  client.close();
  await child.stop();
  return {
    streams: N, seconds: secs, tokensPerSec: tokens / secs,
    perStreamMin: rates[0]!, perStreamMedian: rates[N >> 1]!, cpuShare: cpuMs / wallMs,
    producedPerSec: ((tokensOut - before.tokensOut) * 1000) / wallMs,
  };
}

async function simRps() {
  const N = 256;
  const total = quick ? 1024 : 4096;
  const child = await startChild({
    port: 0, mode: 'sim', eosTokenIds: [151645], vocabSize: 151936, eosProbability: 0, speedupRatio: 1000,
    maxRunningRequests: 256, maxNumBatchedTokens: 8192,
  });
  const client = createEngineClient(`grpc://127.0.0.1:${child.port}`);
  const shared = Array.from({ length: 256 }, (_, k) => k + 1);
  let tokens = 0;
  let next = 0;
  const never = new AbortController().signal;
  setMaxListeners(0, never);
  await child.cpu();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: N }, async () => {
    while (next < total) {
      const i = next++;
      const prompt = Uint32Array.from([...shared, ...Array.from({ length: 256 }, (_, k) => 1000 + ((i * 257 + k) % 40000))]);
      await drain(client, `r${i}`, prompt, 64, (k) => (tokens += k), never);
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  const { cpuMs, wallMs } = await child.cpu();
  client.close();
  await child.stop();
  return { requests: total, seconds: secs, requestsPerSec: total / secs, tokensPerSec: tokens / secs, simCpuShare: cpuMs / wallMs };
}

async function coreOnly() {
  const total = quick ? 4000 : 20000;
  const core = createSimCore({ port: 0, mode: 'sim', eosTokenIds: [151645], vocabSize: 151936, eosProbability: 0, speedupRatio: 1e6 });
  const shared = Array.from({ length: 256 }, (_, k) => k + 1);
  let done = 0;
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    let inflight = 0;
    let i = 0;
    const submit = () => {
      while (inflight < 256 && i < total) {
        const id = i++;
        inflight++;
        core.submit({
          id: `c${id}`, prompt: [...shared, ...Array.from({ length: 256 }, (_, k) => 1000 + ((id * 257 + k) % 40000))],
          n: 1, maxNewTokens: 64, minNewTokens: 0, stopTokenIds: [], ignoreEos: true,
        }, (o) => {
          if (o.kind !== 'finish') return;
          inflight--;
          if (++done === total) resolve();
          else submit();
        });
      }
    };
    submit();
  });
  const secs = (performance.now() - t0) / 1000;
  core.close();
  return { requests: total, seconds: secs, requestsPerSec: total / secs, tokensPerSec: (total * 64) / secs, steps: core.ranks[0]!.steps };
}

function syntheticBatch(seq: number, perBatch: number): HubBatch {
  const events = Array.from({ length: perBatch }, (_, j) => {
    const h = seq * perBatch + j + 1;
    return { kind: 'stored' as const, parentHash: h > 1 ? h - 1 : undefined, blocks: [{ hash: h, tokenIds: Array.from({ length: 16 }, (_, k) => (h + k) % 50000) }] };
  });
  return { seq, ts: Date.now() / 1000, dpRank: 0, events };
}

async function kvIngest(kind: 'grpc' | 'zmq') {
  const batches = quick ? 1000 : 4000;
  const perBatch = 32;
  const mock = await startMockEngine({
    port: 0, mode: 'sim', eosTokenIds: [99], vocabSize: 100,
    kvEventsZmq: kind === 'zmq' ? { endpoint: 'tcp://127.0.0.1:*', layout: 'map' } : undefined,
  });
  const set = new KvBlockSet();
  let events = 0;
  const sink = (e: Parameters<KvBlockSet['apply']>[0]) => {
    events += e.length;
    set.apply(e);
  };
  const sub = kind === 'grpc'
    ? new GrpcKvEventSubscriber({ url: mock.url, sink })
    : new ZmqKvEventSubscriber({ endpoint: mock.zmq!.endpoint, worker: 'w', sink });
  sub.start();
  await new Promise((r) => setTimeout(r, 300));
  const hub = mock.core.hub;
  const t0 = performance.now();
  const target = perBatch * batches;
  for (let b = 0; b < batches; b++) {
    for (const e of syntheticBatch(b, perBatch).events) hub.add(0, e);
    hub.flush(0);
    if (b % 64 === 63) {
      // Keep the publisher at most ~8k events ahead of the subscriber.
      while (events < (b + 1) * perBatch - 8192) await new Promise((r) => setImmediate(r));
    }
  }
  while (events < target && performance.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 1));
  const secs = (performance.now() - t0) / 1000;
  sub.close();
  await mock.close();
  return { events: target, received: events, seconds: secs, eventsPerSec: events / secs, blocksHeld: set.size(kind === 'grpc' ? mock.url : 'w') };
}

function kvDecode() {
  const n = quick ? 1000 : 4000;
  const protos = Array.from({ length: 200 }, (_, i) => toBinary(KvEventBatchSchema, toProto(syntheticBatch(i, 32), 16)));
  const packs = Array.from({ length: 200 }, (_, i) => encodeBatch(syntheticBatch(i, 32), 16, 'array'));
  let t0 = performance.now();
  let ev = 0;
  for (let i = 0; i < n; i++) ev += normaliseBatch(fromBinary(KvEventBatchSchema, protos[i % 200]!), 'w').length;
  const grpc = ev / ((performance.now() - t0) / 1000);
  t0 = performance.now();
  ev = 0;
  for (let i = 0; i < n; i++) ev += decodeVllmBatch(packs[i % 200]!, 'w').events.length;
  const msgpack = ev / ((performance.now() - t0) / 1000);
  return { protobufEventsPerSec: grpc, msgpackEventsPerSec: msgpack };
}

const which = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const want = (k: string) => which.length === 0 || which.includes(k);

if (want('streams')) {
  const r = await streams();
  console.log(`streams   ${r.streams} concurrent, ${fmt(r.seconds, 1)} s: ${fmt(r.tokensPerSec)} tokens/s total, per stream min ${fmt(r.perStreamMin, 1)} / median ${fmt(r.perStreamMedian, 1)} tokens/s; simulator produced ${fmt(r.producedPerSec)} tokens/s (${fmt(r.producedPerSec / r.streams, 1)} per stream) using ${fmt(r.cpuShare * 100, 1)}% of one core`);
}
if (want('sim-rps')) {
  const r = await simRps();
  console.log(`sim-rps   ${r.requests} requests (512 prompt, 64 out) at speedup 1000 over gRPC: ${fmt(r.requestsPerSec)} req/s, ${fmt(r.tokensPerSec)} tokens/s, simulator CPU ${fmt(r.simCpuShare * 100, 1)}%`);
}
if (want('core')) {
  const r = await coreOnly();
  console.log(`core      ${r.requests} requests (512 prompt, 64 out), no transport, speedup 1e6: ${fmt(r.requestsPerSec)} req/s, ${fmt(r.tokensPerSec)} tokens/s, ${r.steps} steps`);
}
if (want('kv-grpc')) {
  const r = await kvIngest('grpc');
  console.log(`kv-grpc   ${fmt(r.received)} events (1 block each, 32 per batch) via SubscribeKvEvents → KvBlockSet: ${fmt(r.eventsPerSec)} events/s (${r.blocksHeld} blocks held)`);
}
if (want('kv-zmq')) {
  const r = await kvIngest('zmq');
  console.log(`kv-zmq    ${fmt(r.received)} events (1 block each, 32 per batch) via ZMQ (map layout) → KvBlockSet: ${fmt(r.eventsPerSec)} events/s (${r.blocksHeld} blocks held)`);
}
if (want('kv-decode')) {
  const r = kvDecode();
  console.log(`kv-decode protobuf batch → events: ${fmt(r.protobufEventsPerSec)} events/s; msgpack (array layout) → events: ${fmt(r.msgpackEventsPerSec)} events/s`);
}
process.exit(0);
