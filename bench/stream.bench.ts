// Streaming under load: N concurrent streams of T tokens each from a sim engine paced at a
// fixed step (every running sequence gets one token per step, all at the same instant),
// measured in one run straight from the engine over gRPC (the baseline) and through Portico
// as SSE with two clients (a raw socket that only counts deltas, and node:http as before).
//
// Reported per path: tokens/s, inter-token gaps (p50/p99/max; the earlier figure "added gap"
// was Portico's gap p99 minus the baseline's, kept for comparison), and per-token latency:
// client arrival − the engine's emission of that token, both on CLOCK_MONOTONIC (the sim
// engine records its emissions when PORTICO_SIM_EMIT_TRACE is set). The added latency is
// Portico's latency quantile minus the baseline's. Also the frontend's and the client's CPU per
// token, and memory: RSS idle, and with M streams open at once. Engine, frontend and this
// client are separate processes; the frontend runs one shard.
//
// Usage: npm run build:ts && [STREAM_SERVE_NODE_FLAGS=...] node dist/bench/stream.bench.js [streams=256] [tokens=256] [step-ms=20] [memory-streams=1000]

import { once } from 'node:events';
import { readFileSync, rmSync } from 'node:fs';

import { Model } from '../src/native/core.js';
import { cpuSeconds, QWEN3, ROOT, startPair } from './serve-procs.js';
import { chatBody, direct, gapsOf, latencies, quantiles, viaNodeHttp, viaRaw, type Trace, type ViaResult } from './stream-measure.js';

const streams = Number(process.argv[2] ?? 256);
const tokens = Number(process.argv[3] ?? 256);
const stepMs = Number(process.argv[4] ?? 20);
const memStreams = Number(process.argv[5] ?? 1000);

// STREAM_SERVE_NODE_FLAGS: extra node flags for the frontend process (e.g. --single-threaded-gc).
const PROBE = ['--expose-gc', '--import', `${ROOT}dist/bench/gc-probe.js`, ...(process.env.STREAM_SERVE_NODE_FLAGS ?? '').split(' ').filter(Boolean)];
const simArgs = (step: number) => ['--mode', 'sim', '--step-ms', String(step), '--prefill-ms-per-token', '0', '--decode-ms-per-seq', '0', '--decode-ms-per-kv-token', '0', '--max-num-seqs', '4096', '--eos-probability', '0'];

const MB = (b: number) => (b / 1e6).toFixed(1);

// Phase 1: throughput, gaps and per-token latency. The engine records when it emitted every
// token (CLOCK_MONOTONIC, written when it is stopped); the clients time every read on the same clock.
const traceFile = `/tmp/portico-stream-trace-${process.pid}.json`;
process.env.PORTICO_SIM_EMIT_TRACE = traceFile;
const pair = await startPair(simArgs(stepMs), [], PROBE);
delete process.env.PORTICO_SIM_EMIT_TRACE;
const port = Number(new URL(pair.base).port);
const idle = await (async () => {
  const p = pair.server.waitProbe();
  pair.server.child.kill('SIGUSR2');
  return p;
})();
// Warm-up (JIT, connections), then the measured runs: direct, raw client, node:http client.
await Promise.all(Array.from({ length: 16 }, () => fetch(`${pair.base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody(16) }).then((r) => r.text())));
// Each client warms up too (its JIT and connections), under tags the trace analysis ignores.
await direct(pair.engineUrl, 16, 16, 'warm-direct');
await viaRaw(port, 16, 16, 'warm-raw');
await viaNodeHttp(port, 16, 16, 'warm-http');
const base = await direct(pair.engineUrl, streams, tokens);
const measured = async (run: () => Promise<ViaResult>) => {
  const cpu0 = cpuSeconds(pair.server.child.pid!);
  const r = await run();
  return { ...r, cpu: cpuSeconds(pair.server.child.pid!) - cpu0 };
};
const raw = await measured(() => viaRaw(port, streams, tokens, 'raw'));
const nodeHttp = await measured(() => viaNodeHttp(port, streams, tokens, 'http'));
const engineExit = once(pair.engine.child, 'exit');
pair.close();
await engineExit;
const trace = JSON.parse(readFileSync(traceFile, 'utf8')) as Trace;
rmSync(traceFile);

// Phase 2: memory with many streams open at once (slow pacing so the client keeps up).
const mem = await startPair(simArgs(500), [], PROBE);
const probe = () => {
  const p = mem.server.waitProbe();
  mem.server.child.kill('SIGUSR2');
  return p;
};
await Promise.all(Array.from({ length: 16 }, () => fetch(`${mem.base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody(2) }).then((r) => r.text())));
const memIdle = await probe();
const acs = Array.from({ length: memStreams }, () => new AbortController());
const readers: Promise<void>[] = [];
await Promise.all(
  acs.map(async (ac) => {
    const res = await fetch(`${mem.base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody(20_000), signal: ac.signal });
    const it = res.body![Symbol.asyncIterator]();
    await it.next();
    // Keep reading so no stream is held up by backpressure.
    readers.push((async () => { try { while (!(await it.next()).done); } catch { /* aborted */ } })());
  }),
);
const memLive = await probe();
for (const ac of acs) ac.abort();
await Promise.all(readers);
mem.close();

const model = Model.load(QWEN3);
const f2 = (x: number) => x.toFixed(2);
const fmt = (q: { p50: number; p99: number; max: number }) => `${f2(q.p50)} / ${f2(q.p99)} / ${f2(q.max)}`;
const fmtL = (q: { p50: number; p99: number; p999: number; max: number }) => `${f2(q.p50)} / ${f2(q.p99)} / ${f2(q.p999)} / ${f2(q.max)}`;
const bg = quantiles(gapsOf(base.arrivals));
const bl = latencies(base.arrivals, trace);
const bq = quantiles(bl.lat);
console.log(`${streams} streams × ${tokens} tokens, sim engine paced at ${stepMs} ms per step; frontend one shard, engine, frontend and this client separate processes\n`);
console.log('| path | tokens | seconds | tokens/s | gap p50 / p99 / max (ms) | latency p50 / p99 / p99.9 / max (ms) | frontend CPU per token | client CPU per token |\n|---|---:|---:|---:|---|---|---:|---:|');
console.log(`| engine direct (gRPC, baseline) | ${base.tokens} | ${base.secs.toFixed(2)} | ${(base.tokens / base.secs).toFixed(0)} | ${fmt(bg)} | ${fmtL(bq)} | – | ${((base.clientCpu * 1e6) / base.tokens).toFixed(1)} µs |`);
const rows: [string, ViaResult & { cpu: number }][] = [['through Portico, raw socket client', raw], ['through Portico, node:http client', nodeHttp]];
const summary: string[] = [];
for (const [name, v] of rows) {
  const g = quantiles(gapsOf(v.arrivals));
  const l = latencies(v.arrivals, trace, model, tokens);
  const q = quantiles(l.lat);
  console.log(`| ${name} | ${v.completion} | ${v.secs.toFixed(2)} | ${(v.completion / v.secs).toFixed(0)} | ${fmt(g)} | ${fmtL(q)} | ${((v.cpu * 1e6) / v.completion).toFixed(1)} µs | ${((v.clientCpu * 1e6) / v.completion).toFixed(1)} µs |`);
  summary.push(`${name}: added latency per token p50 ${f2(q.p50 - bq.p50)} ms, p99 ${f2(q.p99 - bq.p99)} ms, p99.9 ${f2(q.p999 - bq.p999)} ms (${v.events} deltas for ${v.completion} tokens${l.mismatched ? `; ${l.mismatched} streams left out: delta count ≠ replay` : ''}); old figure, gap p99 − gap p99: ${f2(g.p99 - bg.p99)} ms`);
}
console.log(`\n${summary.join('\n')}`);
console.log('\n(latency = client arrival − engine emission of the token, CLOCK_MONOTONIC; through Portico per content delta, from its last token.)');
console.log(`memory (after a full GC): idle RSS ${MB(idle.rss)} MB (heap ${MB(idle.heapUsed)} MB); ${memStreams} streams open: RSS ${MB(memIdle.rss)} → ${MB(memLive.rss)} MB, heapUsed ${MB(memIdle.heapUsed)} → ${MB(memLive.heapUsed)} MB; per 1,000 streams RSS ${MB(((memLive.rss - memIdle.rss) * 1000) / memStreams)} MB, heap ${MB(((memLive.heapUsed - memIdle.heapUsed) * 1000) / memStreams)} MB`);
process.exit(0);
