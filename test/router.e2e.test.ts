// The router through the real server: KV-aware routing on four simulated workers
// (shared prefixes land where their blocks are, and come back cached), session
// affinity, and the queue with busy thresholds, /busy_threshold, 529 + Retry-After
// and the queued_requests gauge.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';
import { eventually } from './helpers/eventually.js';

const MODEL = 'qwen3';
let kv: Proc;
let queued: Proc;

before(async () => {
  // Predicted blocks live 1 ms: stickiness below can only come from the workers' KV events.
  kv = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'sim', '--mock-workers', '4', '--router-mode', 'kv', '--router-ttl-secs', '0.001', '--router-session-affinity-ttl-secs', '60']);
  queued = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '2', '--active-prefill-tokens-threshold', '0', '--router-queue-timeout-secs', '0.5', '--router-queue-retry-after-secs', '7']);
});
after(async () => {
  await Promise.all([kv?.stop(), queued?.stop()]);
});

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null };
}

function chatBody(system: string, user: string, extra: Record<string, unknown> = {}) {
  return {
    model: MODEL,
    max_tokens: 3,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    nvext: { extra_fields: ['worker_id', 'timing'] },
    ...extra,
  };
}

const prefix = (tag: string) => Array.from({ length: 120 }, (_, i) => `${tag}-${i}`).join(' ');

test('kv mode: repeated shared-prefix requests land on the worker holding the prefix and come back cached', async () => {
  const tags = ['alpha', 'beta', 'gamma'];
  const workers = new Map<string, Set<number>>(tags.map((t) => [t, new Set()]));
  const cached: number[] = [];
  for (let round = 0; round < 4; round++) {
    for (const t of tags) {
      const r = await post(kv.url, '/v1/chat/completions', chatBody(prefix(t), `question ${round}`));
      assert.equal(r.status, 200, JSON.stringify(r.json));
      workers.get(t)!.add(r.json.nvext.worker_id.decode_worker_id);
      if (round > 0) cached.push((r.json.usage.prompt_tokens_details?.cached_tokens ?? 0) / r.json.usage.prompt_tokens);
      await sleep(30); // let the worker's KV events arrive
    }
  }
  for (const [t, ws] of workers) assert.equal(ws.size, 1, `${t} went to ${[...ws]}`);
  // Everything but the per-turn question and the last partial block is cached.
  for (const c of cached) assert.ok(c >= 0.9, `cached share ${cached}`);
});

test('session affinity: X-Dynamo-Session-ID keeps different prompts on one worker', async () => {
  const seen = new Set<number>();
  for (let i = 0; i < 6; i++) {
    const r = await post(kv.url, '/v1/chat/completions', chatBody(prefix(`session-${i}`), 'hi'), { 'x-dynamo-session-id': 'agent-42' });
    assert.equal(r.status, 200);
    seen.add(r.json.nvext.worker_id.decode_worker_id);
  }
  assert.equal(seen.size, 1);
});

test('queue: every worker busy → waits, times out with 529 and Retry-After, counted in queued_requests; /busy_threshold releases it', async () => {
  const get = await fetch(`${queued.url}/busy_threshold`).then((r) => r.json());
  assert.deepEqual(get, { thresholds: [{ model: MODEL, active_decode_blocks_threshold: null, active_prefill_tokens_threshold: 0 }] });
  const pending = post(queued.url, '/v1/chat/completions', chatBody('s', 'u'));
  const queuedNow = async () => /queued_requests\{model="qwen3"\} 1/.test(await fetch(`${queued.url}/metrics`).then((r) => r.text()));
  await eventually(queuedNow, 'the request is queued');
  const metrics = await fetch(`${queued.url}/metrics`).then((r) => r.text());
  assert.match(metrics, /queued_requests\{model="qwen3"\} 1/);
  const r = await pending;
  assert.equal(r.status, 529);
  assert.equal(r.headers.get('retry-after'), '7');
  assert.equal(r.json.error.code, 'router_queue_timeout');
  // Held again, then released by raising the threshold at run time.
  const held = post(queued.url, '/v1/chat/completions', chatBody('s', 'u'));
  await eventually(queuedNow, 'the request is queued again');
  await sleep(100); // held at least this long (a lower bound only: a busy machine holds it longer)
  const set = await post(queued.url, '/busy_threshold', { active_prefill_tokens_threshold: 100000, active_decode_blocks_threshold: 0.9 });
  assert.equal(set.status, 200);
  assert.deepEqual(set.json, { model: MODEL, active_decode_blocks_threshold: 0.9, active_prefill_tokens_threshold: 100000 });
  const ok = await held;
  assert.equal(ok.status, 200);
  assert.ok(ok.json.nvext.timing.queue_ms >= 80, `queue_ms ${ok.json.nvext.timing.queue_ms}`);
  assert.equal((await post(queued.url, '/busy_threshold', { active_decode_blocks_threshold: 2 })).status, 400);
});

async function prompts(url: string): Promise<{ count: number; sum: number }> {
  const m = await fetch(`${url}/metrics`).then((r) => r.text());
  const count = Number(/input_sequence_tokens_count\{model="qwen3"\} (\d+)/.exec(m)![1]);
  const sum = Number(/input_sequence_tokens_sum\{model="qwen3"\} ([\d.e+]+)/.exec(m)![1]);
  return { count, sum };
}

test('speculative_prefill sends the next-turn prompt (max_tokens 1) and the next turn finds it cached', async () => {
  const system = prefix('spec');
  const before = await prompts(kv.url);
  const first = await post(kv.url, '/v1/chat/completions', { ...chatBody(system, 'first question'), max_tokens: 40, ignore_eos: true, nvext: { extra_fields: ['worker_id'], agent_hints: { speculative_prefill: true } } });
  assert.equal(first.status, 200);
  const reply = first.json.choices[0].message.content as string;
  await eventually(async () => (await prompts(kv.url)).count - before.count >= 2, 'the background request runs');
  const after = await prompts(kv.url);
  assert.equal(after.count - before.count, 2, 'the turn and its speculative prefill');
  const specTokens = after.sum - before.sum - first.json.usage.prompt_tokens;
  assert.ok(specTokens > first.json.usage.prompt_tokens, `speculative prompt ${specTokens} tokens`);
  const messages = [
    { role: 'system', content: system },
    { role: 'user', content: 'first question' },
    { role: 'assistant', content: reply },
    { role: 'user', content: 'second' },
  ];
  const second = await post(kv.url, '/v1/chat/completions', { model: MODEL, max_tokens: 2, messages, nvext: { extra_fields: ['worker_id'] } });
  assert.equal(second.status, 200);
  const cached = second.json.usage.prompt_tokens_details?.cached_tokens ?? 0;
  // The next turn's prompt starts with the speculative one up to the new user text.
  assert.ok(cached >= specTokens - 16 - 8, `cached ${cached}, speculative ${specTokens}, second ${second.json.usage.prompt_tokens}`);
});
