// Streaming under load: N concurrent streams of T tokens each from a sim engine paced at a
// fixed step (every running sequence gets one token per step), measured twice in one run:
// straight from the engine over gRPC (its own pacing, the baseline) and through Portico as
// SSE. Reports tokens/s delivered, inter-token gaps (p50/p99/max) and the gap Portico adds,
// the frontend's CPU per token, and memory: RSS idle, and with M streams open at once.
// Engine and frontend are separate processes; the frontend runs one shard.
//
// Usage: npm run build:ts && node dist/bench/stream.bench.js [streams=256] [tokens=256] [step-ms=20] [memory-streams=1000]

import http from 'node:http';

import { createEngineClient } from '../src/engine/factory.js';
import { cpuSeconds, ROOT, startPair } from './serve-procs.js';

const streams = Number(process.argv[2] ?? 256);
const tokens = Number(process.argv[3] ?? 256);
const stepMs = Number(process.argv[4] ?? 20);
const memStreams = Number(process.argv[5] ?? 1000);

const PROBE = ['--expose-gc', '--import', `${ROOT}dist/bench/gc-probe.js`];
const simArgs = (step: number) => ['--mode', 'sim', '--step-ms', String(step), '--prefill-ms-per-token', '0', '--decode-ms-per-seq', '0', '--decode-ms-per-kv-token', '0', '--max-num-seqs', '4096', '--eos-probability', '0'];

function quantiles(xs: number[]): { p50: number; p99: number; max: number } {
  xs.sort((a, b) => a - b);
  const q = (p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  return { p50: q(0.5), p99: q(0.99), max: xs[xs.length - 1] };
}

// --- Baseline: the engine's own pacing, read with Portico's engine client (no HTTP).
async function direct(url: string): Promise<{ gaps: number[]; tokens: number; secs: number }> {
  const client = createEngineClient(url);
  const gaps: number[] = [];
  let total = 0;
  const prompt = Uint32Array.from({ length: 12 }, (_, i) => 1000 + i);
  const one = async (k: number) => {
    let last = -1;
    for await (const ev of client.generate({ requestId: `direct-${k}`, inputIds: prompt, maxNewTokens: tokens, ignoreEos: true, stream: true }, new AbortController().signal)) {
      const n = ev.kind === 'chunk' ? ev.chunk.tokenIds.length : 0;
      if (n === 0) continue;
      const now = performance.now();
      if (last >= 0) {
        gaps.push(now - last);
        for (let i = 1; i < n; i++) gaps.push(0);
      }
      last = now;
      total += n;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: streams }, (_, k) => one(k)));
  const secs = (performance.now() - t0) / 1000;
  client.close();
  return { gaps, tokens: total, secs };
}

// --- Through Portico: SSE, one content delta per token (skip_special_tokens off keeps every token visible).
const chatBody = (maxTokens: number) =>
  JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: maxTokens, ignore_eos: true, stream: true, stream_options: { include_usage: true } });

// A plain node:http client (lighter than fetch's web streams, so the client is less of the limit).
const agent = new http.Agent({ keepAlive: true, maxSockets: 4096 });

async function viaPortico(base: string): Promise<{ gaps: number[]; events: number; completion: number; secs: number }> {
  const gaps: number[] = [];
  let events = 0;
  let completion = 0;
  const body = chatBody(tokens);
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(`${base}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`status ${res.statusCode}`));
          return;
        }
        res.setEncoding('utf8');
        let last = -1;
        let tail = '';
        res.on('data', (text: string) => {
          const now = performance.now();
          // Count content deltas (the role chunk's empty content, finish and usage chunks carry no token).
          let n = 0;
          for (let i = text.indexOf('"content":"'); i >= 0; i = text.indexOf('"content":"', i + 1)) if (text[i + 11] !== '"') n++;
          tail = (tail + text).slice(-512);
          if (n === 0) return;
          if (last >= 0) {
            gaps.push(now - last);
            for (let i = 1; i < n; i++) gaps.push(0);
          }
          last = now;
          events += n;
        });
        res.on('end', () => {
          const u = /"completion_tokens":(\d+)/.exec(tail);
          if (u) completion += Number(u[1]);
          resolve();
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  const t0 = performance.now();
  await Promise.all(Array.from({ length: streams }, one));
  return { gaps, events, completion, secs: (performance.now() - t0) / 1000 };
}

const MB = (b: number) => (b / 1e6).toFixed(1);
const fmt = (q: { p50: number; p99: number; max: number }) => `${q.p50.toFixed(2)} / ${q.p99.toFixed(2)} / ${q.max.toFixed(2)}`;

// Phase 1: throughput and gaps.
const pair = await startPair(simArgs(stepMs), [], PROBE);
const idle = await (async () => {
  const p = pair.server.waitProbe();
  pair.server.child.kill('SIGUSR2');
  return p;
})();
// Warm-up (JIT, connections), then the two measured runs.
await Promise.all(Array.from({ length: 16 }, () => fetch(`${pair.base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody(16) }).then((r) => r.text())));
const base = await direct(pair.engineUrl);
const cpu0 = cpuSeconds(pair.server.child.pid!);
const via = await viaPortico(pair.base);
const cpu = cpuSeconds(pair.server.child.pid!) - cpu0;
pair.close();

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

const b = quantiles(base.gaps);
const v = quantiles(via.gaps);
console.log(`${streams} streams × ${tokens} tokens, sim engine paced at ${stepMs} ms per step; frontend one shard, engine and frontend separate processes\n`);
console.log('| path | tokens | seconds | tokens/s | inter-token gap p50 / p99 / max (ms) |\n|---|---:|---:|---:|---|');
console.log(`| engine direct (gRPC, baseline) | ${base.tokens} | ${base.secs.toFixed(2)} | ${(base.tokens / base.secs).toFixed(0)} | ${fmt(b)} |`);
console.log(`| through Portico (SSE) | ${via.completion} | ${via.secs.toFixed(2)} | ${(via.completion / via.secs).toFixed(0)} | ${fmt(v)} |`);
console.log(`\n(Portico's gaps are between SSE content deltas: ${via.events} deltas for ${via.completion} tokens; a token whose text is held back, such as half a UTF-8 character, joins the next delta.)`);
console.log(`\nadded gap (Portico − baseline): p50 ${(v.p50 - b.p50).toFixed(2)} ms, p99 ${(v.p99 - b.p99).toFixed(2)} ms; frontend CPU ${(cpu * 1e6 / via.completion).toFixed(1)} µs per token (${cpu.toFixed(2)} s)`);
console.log(`memory (after a full GC): idle RSS ${MB(idle.rss)} MB (heap ${MB(idle.heapUsed)} MB); ${memStreams} streams open: RSS ${MB(memIdle.rss)} → ${MB(memLive.rss)} MB, heapUsed ${MB(memIdle.heapUsed)} → ${MB(memLive.heapUsed)} MB; per 1,000 streams RSS ${MB(((memLive.rss - memIdle.rss) * 1000) / memStreams)} MB, heap ${MB(((memLive.heapUsed - memIdle.heapUsed) * 1000) / memStreams)} MB`);
process.exit(0);
