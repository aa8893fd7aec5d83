// Client disconnects cancel engine work: the worker's running count drops as soon as
// the client goes, Portico's in-flight counts return to zero, and many aborted streams
// leave nothing behind. (Latency figures for this live in bench/cancel.bench.ts.)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';
import { createEngineClient } from '../src/engine/factory.js';
import type { EngineClient } from '../src/engine/types.js';
import { HANG_GUARD_MS } from './helpers/eventually.js';

let server: Proc;
let engine: EngineClient;

before(async () => {
  server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'sim', '--mock-workers', '1']);
  const workers = (await (await fetch(`${server.url}/admin/workers`)).json()) as { models: { workers: { url: string }[] }[] };
  engine = createEngineClient(workers.models[0].workers[0].url);
});
after(async () => {
  engine?.close();
  await server?.stop();
});

async function running(): Promise<number> {
  const l = await engine.loads();
  return l.runningRequests + l.waitingRequests;
}

async function openStream(signal: AbortSignal): Promise<void> {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'tell me a long story' }], max_tokens: 30_000, ignore_eos: true, stream: true }),
    signal,
  });
  const reader = res.body!.getReader();
  await reader.read(); // the stream is live
}

async function until(cond: () => Promise<boolean>, ms: number): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    if (await cond()) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`condition not met within ${ms} ms`);
}

test('a disconnect aborts the engine request promptly', async () => {
  const ac = new AbortController();
  await openStream(ac.signal);
  assert.equal(await running(), 1);
  ac.abort();
  // the request asked for 100,000 tokens: it ends within the hang guard only because the disconnect stopped it
  await until(async () => (await running()) === 0, HANG_GUARD_MS);
});

test('300 aborted streams leave no request running and no count behind', async () => {
  for (let round = 0; round < 10; round++) {
    const acs = Array.from({ length: 30 }, () => new AbortController());
    await Promise.all(acs.map((ac) => openStream(ac.signal)));
    for (const ac of acs) ac.abort();
  }
  await until(async () => (await running()) === 0, HANG_GUARD_MS);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assert.match(metrics, /^portico_frontend_inflight_requests\{model="m"\} 0$/m);
  assert.match(metrics, /^portico_frontend_worker_active_requests\{model="m",worker="0"\} 0$/m);
  const disconnected = Number(/^portico_frontend_disconnected_clients\{model="m"\} (\d+)$/m.exec(metrics)?.[1]);
  assert.ok(disconnected >= 300, `disconnects counted: ${disconnected}`);
  const ok = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 }) });
  assert.equal(ok.status, 200);
});
