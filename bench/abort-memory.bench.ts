// Does the frontend's memory plateau over many aborted streams? A sim engine and a
// one-shard Portico run as separate processes (so the figures are the frontend's own).
// Streams are opened in batches of 50, each read to its first bytes and then aborted; every
// `step` streams, once the engine has dropped them all, the frontend runs a full GC
// (bench/gc-probe.ts, on SIGUSR2) and reports heap and RSS. A leak shows as heapUsed
// growing with the count; allocator caches show as RSS flat after the first steps.
//
// Usage: npm run build:ts && node dist/bench/abort-memory.bench.js [streams=10000] [step=1000]

import { createEngineClient } from '../src/engine/factory.js';
import { ROOT, startPair } from './serve-procs.js';

const total = Number(process.argv[2] ?? 10_000);
const step = Number(process.argv[3] ?? 1000);

const pair = await startPair(['--mode', 'sim'], [], ['--expose-gc', '--import', `${ROOT}dist/bench/gc-probe.js`]);
const engine = createEngineClient(pair.engineUrl);
const idle = async () => {
  for (;;) {
    const l = await engine.loads();
    if (l.runningRequests + l.waitingRequests === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
};
const probe = async () => {
  await idle();
  await new Promise((r) => setTimeout(r, 200));
  const p = pair.server.waitProbe();
  pair.server.child.kill('SIGUSR2');
  return p;
};
const metric = async (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(await (await fetch(`${pair.base}/metrics`)).text())?.[1]);

const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'a long story' }], max_tokens: 30_000, ignore_eos: true, stream: true });
let failures = 0;
const open = async (ac: AbortController) => {
  const res = await fetch(`${pair.base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: ac.signal });
  if (!res.ok) {
    failures++;
    return;
  }
  await res.body!.getReader().read();
};

const MB = (b: number) => (b / 1e6).toFixed(1);
const rows: string[] = [];
const row = (n: number, p: Record<string, number>) => rows.push(`| ${n} | ${MB(p.rss)} | ${MB(p.heapUsed)} | ${MB(p.heapTotal)} | ${MB(p.external)} | ${MB(p.arrayBuffers)} |`);
// Warm-up: a few streams so code and pools exist before the baseline.
for (let i = 0; i < 2; i++) {
  const acs = Array.from({ length: 50 }, () => new AbortController());
  await Promise.all(acs.map(open));
  for (const ac of acs) ac.abort();
}
row(0, await probe());
const t0 = performance.now();
for (let done = 0; done < total; ) {
  const k = Math.min(50, total - done);
  const acs = Array.from({ length: k }, () => new AbortController());
  await Promise.all(acs.map(open));
  for (const ac of acs) ac.abort();
  done += k;
  if (done % step === 0 || done === total) row(done, await probe());
}
const secs = (performance.now() - t0) / 1000;
const inflight = await metric('portico_frontend_inflight_requests');
const workerActive = await metric('portico_frontend_worker_active_requests');
const disconnected = await metric('portico_frontend_disconnected_clients');

console.log(`${total} aborted streams in ${secs.toFixed(1)} s (after 100 warm-up streams); failed opens ${failures}; frontend in-flight ${inflight}, worker active ${workerActive}, disconnected_clients ${disconnected}`);
console.log('\n| aborted streams | RSS MB | heapUsed MB | heapTotal MB | external MB | arrayBuffers MB |\n|---:|---:|---:|---:|---:|---:|');
console.log(rows.join('\n'));
engine.close();
pair.close();
process.exit(0);
