// `portico serve --shards 2`: two uWS apps on worker threads share one port. Requests
// from many connections reach both shards; /metrics from any shard sums them all;
// a worker added or a threshold set through one shard is seen by the other; SIGTERM
// drains both. Which shard answered is visible in /health and GET /admin/workers
// ("shard") and in portico_frontend_shard_requests_total{shard}.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import OpenAI from 'openai';
import { startPortico, runPortico, QWEN3 } from './helpers/portico.js';

const BASE = ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--shards', '2'];

/** One request on a connection of its own (the kernel picks the shard per connection). */
async function fresh(url: string, path: string, init: RequestInit = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${path}`, { ...init, headers: { connection: 'close', 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
  return { status: res.status, json: await res.json() };
}

/** Ask on fresh connections until both shards have answered; returns each shard's answer. */
async function fromBothShards(url: string, path: string): Promise<Map<number, { status: number; json: any }>> {
  const seen = new Map<number, { status: number; json: any }>();
  for (let i = 0; i < 400 && seen.size < 2; i++) {
    const r = await fresh(url, path);
    assert.equal(typeof r.json.shard, 'number', `${path} names the shard that answered: ${JSON.stringify(r.json)}`);
    if (!seen.has(r.json.shard)) seen.set(r.json.shard, r);
  }
  assert.deepEqual([...seen.keys()].sort(), [0, 1], 'both shards answered');
  return seen;
}

function metric(text: string, line: RegExp): number {
  const m = line.exec(text);
  assert.ok(m, `metric ${line} in:\n${text}`);
  return Number(m[1]);
}

test('--shards appears in serve --help with its environment variable', async () => {
  const r = await runPortico(['serve', '--help']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /--shards N\s+uWS apps serving the port[^\n]*Default: 1 on up to 2 CPUs, else half the CPUs[^\n]*\[env PORTICO_SHARDS\]/);
});

test('--shards 0 is a usage error', async () => {
  const r = await runPortico([...BASE.slice(0, -2), '--shards', '0', '--mock', 'echo']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--shards must be an integer >= 1, got '0'/);
});

test('two shards serve chat on one port; /metrics from any shard counts every request', async (t) => {
  const s = await startPortico([...BASE, '--mock', 'echo', '--mock-workers', '2']);
  t.after(() => s.stop());
  // Every request on a connection of its own: connections land on both shards.
  const K = 40;
  const replies = await Promise.all(
    Array.from({ length: K }, async (_, i) => {
      const client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { connection: 'close' } });
      const r = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: `request ${i}` }], nvext: { use_raw_prompt: true } } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      return r.choices[0]!.message.content;
    }),
  );
  assert.deepEqual(replies, Array.from({ length: K }, (_, i) => `request ${i}`));

  // /metrics on fresh connections (so from both shards): every answer has the totals of all shards.
  const texts: string[] = [];
  for (let i = 0; i < 8; i++) {
    const res = await fetch(`${s.url}/metrics`, { headers: { connection: 'close' } });
    assert.equal(res.status, 200);
    texts.push(await res.text());
  }
  for (const text of texts) {
    assert.equal(metric(text, /^portico_frontend_requests_total\{model="m",endpoint="\/v1\/chat\/completions",request_type="unary",status="success",error_type=""\} (\d+)$/m), K);
    assert.equal(metric(text, /^portico_frontend_request_duration_seconds_count\{model="m"\} (\d+)$/m), K, 'histograms merged');
    assert.equal(metric(text, /^portico_frontend_inflight_requests\{model="m"\} (\d+)$/m), 0);
    const s0 = metric(text, /^portico_frontend_shard_requests_total\{shard="0"\} (\d+)$/m);
    const s1 = metric(text, /^portico_frontend_shard_requests_total\{shard="1"\} (\d+)$/m);
    assert.ok(s0 > 0 && s1 > 0, `both shards served requests (${s0} and ${s1})`);
    assert.ok(s0 + s1 >= K);
    assert.equal((text.match(/^# TYPE portico_frontend_requests_total counter$/gm) ?? []).length, 1, 'one family, not one per shard');
  }
  const health = await fromBothShards(s.url, '/health');
  for (const h of health.values()) assert.equal(h.status, 200);
});

test('a worker added, a threshold set or a worker removed through one shard is seen by the other', async (t) => {
  const engine = await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'echo']);
  t.after(() => engine.stop());
  const s = await startPortico([...BASE, '--mock', 'echo', '--mock-workers', '1']);
  t.after(() => s.stop());

  const added = await fresh(s.url, '/admin/workers', { method: 'POST', body: JSON.stringify({ url: engine.url }) });
  assert.equal(added.status, 201);
  assert.equal(added.json.worker.id, 1);
  for (const [shard, r] of await fromBothShards(s.url, '/admin/workers')) {
    assert.deepEqual(r.json.models[0].workers.map((w: { id: number; url: string }) => [w.id, w.url === engine.url]), [[0, false], [1, true]], `shard ${shard} has the new worker`);
  }
  // Each shard checks the new worker's health itself; on a loaded machine a first check
  // can fail, and the shard's next poll (2 s) sets it right. Wait until both see it healthy.
  const healthyOn = new Set<number>();
  for (let i = 0; i < 400 && healthyOn.size < 2; i++) {
    const r = await fresh(s.url, '/admin/workers');
    if (r.json.models[0].workers.find((w: { id: number }) => w.id === 1)?.healthy) healthyOn.add(r.json.shard);
    else await new Promise((done) => setTimeout(done, 25));
  }
  assert.equal(healthyOn.size, 2, 'both shards see worker 1 healthy');
  // Either shard routes to it by id.
  const client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { connection: 'close' } });
  for (let i = 0; i < 8; i++) {
    const r = (await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'to 1' }], nvext: { use_raw_prompt: true, backend_instance_id: 1, extra_fields: ['worker_id'] } } as OpenAI.ChatCompletionCreateParamsNonStreaming)) as any;
    assert.equal(r.nvext.worker_id.decode_worker_id, 1);
  }
  const again = await fresh(s.url, '/admin/workers', { method: 'POST', body: JSON.stringify({ url: engine.url }) });
  assert.equal(again.status, 409, 'the same worker twice, whichever shard is asked');
  assert.equal(again.json.error.code, 'worker_exists');

  const set = await fresh(s.url, '/busy_threshold', { method: 'POST', body: JSON.stringify({ active_prefill_tokens_threshold: 1234 }) });
  assert.equal(set.status, 200);
  for (let i = 0; i < 6; i++) {
    const r = await fresh(s.url, '/busy_threshold');
    assert.equal(r.json.thresholds[0].active_prefill_tokens_threshold, 1234);
  }
  const bad = await fresh(s.url, '/busy_threshold', { method: 'POST', body: JSON.stringify({ model: 'nope', active_prefill_tokens_threshold: 1 }) });
  assert.equal(bad.status, 404);
  assert.equal(bad.json.error.code, 'model_not_found');

  const removed = await fresh(s.url, '/admin/workers/0', { method: 'DELETE' });
  assert.deepEqual(removed.json, { model: 'm', removed: 0 });
  const missing = await fresh(s.url, '/admin/workers/0', { method: 'DELETE' });
  assert.equal(missing.status, 404);
  assert.equal(missing.json.error.code, 'unknown_worker');
  for (const [shard, r] of await fromBothShards(s.url, '/admin/workers')) {
    assert.deepEqual(r.json.models[0].workers.map((w: { id: number }) => w.id), [1], `shard ${shard} dropped worker 0`);
  }
  const gone = await fresh(s.url, '/v1/chat/completions', { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], nvext: { backend_instance_id: 0 } }) });
  assert.equal(gone.status, 400);
  assert.equal((await fresh(s.url, '/live')).status, 200, 'still serving');
});

test('SIGTERM drains both shards: both say shutting_down, in-flight streams finish, exit 0', async () => {
  // The shard count from the environment this time (PORTICO_SHARDS).
  const s = await startPortico([...BASE.slice(0, -2), '--mock', 'sim', '--mock-workers', '1'], { PORTICO_SHARDS: '2' });
  // Streams on many connections, so both shards hold some while draining.
  const streams = await Promise.all(
    Array.from({ length: 16 }, () =>
      fetch(`${s.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }], stream: true, max_tokens: 150, ignore_eos: true }),
      }),
    ),
  );
  for (const r of streams) assert.equal(r.status, 200);
  const bodies = streams.map((r) => r.text());
  s.child.kill('SIGTERM');
  const draining = new Map<number, { status: number; json: any }>();
  for (let i = 0; i < 400 && draining.size < 2; i++) {
    const r = await fresh(s.url, '/health');
    if (r.json.status === 'shutting_down') draining.set(r.json.shard, r);
  }
  assert.deepEqual([...draining.keys()].sort(), [0, 1], 'both shards answered shutting_down while draining');
  for (const r of draining.values()) assert.equal(r.status, 503);
  for (const text of await Promise.all(bodies)) {
    assert.ok(text.endsWith('data: [DONE]\n\n'), 'every in-flight stream completed');
    assert.match(text, /"finish_reason":"length"/);
  }
  const [code] = (await once(s.child, 'exit')) as [number];
  assert.equal(code, 0);
  assert.match(s.output(), /serving on 2 shards/);
});

test('the router queue bound counts the requests waiting in every shard', async (t) => {
  // A worker is busy past 0 active prefill tokens: every request waits; the queue holds one.
  const s = await startPortico([...BASE, '--mock', 'echo', '--mock-workers', '1', '--active-prefill-tokens-threshold', '0', '--router-queue-max-size', '1', '--router-queue-timeout-secs', '60']);
  t.after(() => s.stop());
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'wait' }], max_tokens: 1 });
  const abort = new AbortController();
  const waiting = fetch(`${s.url}/v1/chat/completions`, { method: 'POST', body, headers: { 'content-type': 'application/json', connection: 'close' }, signal: abort.signal }).catch(() => null);
  let queued = 0;
  for (let i = 0; i < 200 && queued === 0; i++) {
    queued = metric(await (await fetch(`${s.url}/metrics`, { headers: { connection: 'close' } })).text(), /^portico_frontend_queued_requests\{model="m"\} (\d+)$/m);
  }
  assert.equal(queued, 1, 'the first request waits in its shard\'s queue');
  // Whichever shard gets them, the queue (of both shards together) is full.
  // (Each on its own connection: without the shared count, the other shard would queue one.)
  for (let i = 0; i < 12; i++) {
    const r = await fresh(s.url, '/v1/chat/completions', { method: 'POST', body });
    assert.equal(r.status, 529);
    assert.equal(r.json.error.code, 'router_queue_full');
  }
  abort.abort();
  await waiting;
  assert.equal((await fresh(s.url, '/live')).status, 200, 'still serving');
});
