// The router's inputs on every generation endpoint, and DP-rank-aware routing,
// through the real server:
//  - /v1/completions, /v1/messages and /v1/responses pass the same routing inputs
//    as chat (session affinity, worker overrides, speculative prefill), on four
//    simulated workers in round-robin mode, where only those inputs can keep a
//    prompt on the worker that has it cached;
//  - kv mode over two simulated workers with two data-parallel ranks each: a prefix
//    stays on one (worker, rank) and comes back cached, nvext.dp_rank overrides,
//    an out-of-range rank is a 400.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { Model } from '../src/native/core.js';

const MODEL = 'qwen3';
let rr: Proc;
let dp: Proc;
let dpEngines: MockEngine[] = [];

before(async () => {
  rr = await startPortico(['serve', '--shards', '1', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'sim', '--mock-workers', '4', '--router-mode', 'round-robin', '--router-session-affinity-ttl-secs', '60']);
  const info = Model.load(QWEN3).info();
  dpEngines = await Promise.all([0, 1].map(() => startMockEngine({ port: 0, mode: 'sim', dataParallelSize: 2, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: MODEL, speedupRatio: 10 })));
  // Predicted blocks live 1 ms: rank stickiness below can only come from the ranks' KV events.
  dp = await startPortico(['serve', '--shards', '1', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, ...dpEngines.flatMap((e) => ['--worker', e.url]), '--router-mode', 'kv', '--router-ttl-secs', '0.001']);
});
after(async () => {
  await Promise.all([rr?.stop(), dp?.stop()]);
  await Promise.all(dpEngines.map((e) => e.close()));
});

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const prefix = (tag: string) => Array.from({ length: 120 }, (_, i) => `${tag}-${i}`).join(' ');

/** One endpoint's request for a prompt, and how to read (prompt, cached) tokens from its answer. */
interface Endpoint {
  path: string;
  body(text: string, extra?: Record<string, unknown>): Record<string, unknown>;
  usage(json: any): { prompt: number; cached: number };
}

const ENDPOINTS: Endpoint[] = [
  {
    path: '/v1/completions',
    body: (text, extra = {}) => ({ model: MODEL, prompt: text, max_tokens: 2, ...extra }),
    usage: (j) => ({ prompt: j.usage.prompt_tokens, cached: j.usage.prompt_tokens_details?.cached_tokens ?? 0 }),
  },
  {
    path: '/v1/messages',
    body: (text, extra = {}) => ({ model: MODEL, max_tokens: 2, messages: [{ role: 'user', content: text }], ...extra }),
    // Portico's input_tokens counts the whole prompt, cache reads included.
    usage: (j) => ({ prompt: j.usage.input_tokens, cached: j.usage.cache_read_input_tokens ?? 0 }),
  },
  {
    path: '/v1/responses',
    body: (text, extra = {}) => ({ model: MODEL, max_output_tokens: 2, input: text, ...extra }),
    usage: (j) => ({ prompt: j.usage.input_tokens, cached: j.usage.input_tokens_details?.cached_tokens ?? 0 }),
  },
];

for (const ep of ENDPOINTS) {
  test(`${ep.path}: round-robin moves a repeated prompt to another worker (uncached); X-Dynamo-Session-ID keeps it cached`, async () => {
    const text = prefix(`rr${ep.path}`);
    const a = await post(rr.url, ep.path, ep.body(text));
    const b = await post(rr.url, ep.path, ep.body(text));
    assert.equal(a.status, 200, JSON.stringify(a.json));
    assert.equal(ep.usage(b.json).cached, 0, 'round-robin: the second copy went to a worker without it');
    const session = { 'x-dynamo-session-id': `s${ep.path}` };
    const s1 = await post(rr.url, ep.path, ep.body(`${text} session`), session);
    assert.equal(s1.status, 200);
    for (let i = 0; i < 3; i++) {
      await sleep(20);
      const s = await post(rr.url, ep.path, ep.body(`${text} session`), session);
      const u = ep.usage(s.json);
      assert.ok(u.cached / u.prompt >= 0.8, `${ep.path} turn ${i}: cached ${u.cached} of ${u.prompt}`);
    }
  });

  test(`${ep.path}: a worker override (nvext or header) routes there; an unknown worker is a 400`, async () => {
    const text = prefix(`pin${ep.path}`);
    const first = await post(rr.url, ep.path, ep.body(text, { nvext: { backend_instance_id: 2 } }));
    assert.equal(first.status, 200, JSON.stringify(first.json));
    await sleep(20);
    const again = await post(rr.url, ep.path, ep.body(text), { 'x-dynamo-worker-instance-id': '2' });
    const u = ep.usage(again.json);
    assert.ok(u.cached / u.prompt >= 0.8, `pinned to the same worker: cached ${u.cached} of ${u.prompt}`);
    const bad = await post(rr.url, ep.path, ep.body(text), { 'x-dynamo-worker-instance-id': '9' });
    assert.equal(bad.status, 400);
    const message = bad.json.error.message as string;
    assert.match(message, /worker 9 does not exist/);
    if (ep.path === '/v1/messages') assert.equal(bad.json.type, 'error', 'Anthropic error shape');
  });
}

async function promptCount(url: string): Promise<number> {
  const m = await fetch(`${url}/metrics`).then((r) => r.text());
  return Number(/input_sequence_tokens_count\{model="qwen3"\} (\d+)/.exec(m)![1]);
}

for (const ep of ENDPOINTS) {
  test(`${ep.path}: agent_hints.speculative_prefill sends the next-turn prompt in the background`, async () => {
    const before = await promptCount(rr.url);
    const r = await post(rr.url, ep.path, ep.body(prefix(`spec${ep.path}`), { nvext: { agent_hints: { speculative_prefill: true } } }));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    let after = before;
    for (let i = 0; i < 100 && after - before < 2; i++) {
      await sleep(20);
      after = await promptCount(rr.url);
    }
    assert.equal(after - before, 2, 'the turn and its speculative prefill');
  });
}

test('/v1/messages and /v1/responses refuse nvext fields they do not implement', async () => {
  const m = await post(rr.url, '/v1/messages', ENDPOINTS[1]!.body('hi', { nvext: { extra_fields: ['worker_id'] } }));
  assert.equal(m.status, 400);
  assert.match(m.json.error.message, /`nvext\.extra_fields` is not supported on \/v1\/messages/);
  const r = await post(rr.url, '/v1/responses', ENDPOINTS[2]!.body('hi', { nvext: { greed_sampling: true } }));
  assert.equal(r.status, 400);
  assert.match(r.json.error.message, /`nvext\.greed_sampling` is not supported on \/v1\/responses/);
  const bad = await post(rr.url, '/v1/responses', ENDPOINTS[2]!.body('hi', { nvext: { bogus: 1 } }));
  assert.equal(bad.status, 400);
  assert.match(bad.json.error.message, /`nvext\.bogus`/);
});

function chat(system: string, user: string, nvext: Record<string, unknown> = {}) {
  return {
    model: MODEL,
    max_tokens: 2,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    nvext: { extra_fields: ['worker_id'], ...nvext },
  };
}

test('kv mode with DP ranks: each prefix stays on one (worker, rank) and comes back cached; prefixes spread over the ranks', async () => {
  const tags = ['red', 'green', 'blue', 'amber', 'violet', 'teal'];
  const placed = new Map<string, Set<string>>(tags.map((t) => [t, new Set()]));
  const cached: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (const t of tags) {
      const r = await post(dp.url, '/v1/chat/completions', chat(prefix(t), `question ${round}`));
      assert.equal(r.status, 200, JSON.stringify(r.json));
      const w = r.json.nvext.worker_id;
      assert.ok(w.decode_dp_rank === 0 || w.decode_dp_rank === 1, JSON.stringify(w));
      placed.get(t)!.add(`${w.decode_worker_id}/${w.decode_dp_rank}`);
      if (round > 0) cached.push((r.json.usage.prompt_tokens_details?.cached_tokens ?? 0) / r.json.usage.prompt_tokens);
      await sleep(30); // the rank's KV events arrive
    }
  }
  for (const [t, where] of placed) assert.equal(where.size, 1, `${t} went to ${[...where]}`);
  for (const c of cached) assert.ok(c >= 0.9, `cached shares ${cached}`);
  // Which worker a new prefix lands on is a tie between idle workers (random), but on a
  // worker, new prefixes take its ranks in turn: one holding two or more uses both.
  const byWorker = new Map<string, Set<string>>();
  for (const s of placed.values()) {
    const [w, rank] = [...s][0]!.split('/');
    if (!byWorker.has(w!)) byWorker.set(w!, new Set());
    byWorker.get(w!)!.add(rank!);
  }
  const counts = new Map<string, number>();
  for (const s of placed.values()) {
    const w = [...s][0]!.split('/')[0]!;
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  for (const [w, n] of counts) if (n >= 2) assert.equal(byWorker.get(w)!.size, 2, `worker ${w} took ${n} prefixes on ranks ${[...byWorker.get(w)!]}`);
});

test('kv mode with DP ranks: nvext.dp_rank pins the other rank (which has no cache for the prefix); an out-of-range rank is a 400', async () => {
  const system = prefix('pinned-rank');
  const first = await post(dp.url, '/v1/chat/completions', chat(system, 'q'));
  const w = first.json.nvext.worker_id;
  await sleep(30);
  const other = 1 - w.decode_dp_rank;
  const moved = await post(dp.url, '/v1/chat/completions', chat(system, 'q', { backend_instance_id: w.decode_worker_id, dp_rank: other }));
  assert.equal(moved.status, 200, JSON.stringify(moved.json));
  assert.deepEqual(moved.json.nvext.worker_id, { decode_worker_id: w.decode_worker_id, decode_dp_rank: other });
  assert.equal(moved.json.usage.prompt_tokens_details?.cached_tokens ?? 0, 0, 'the other rank has its own, cold cache');
  await sleep(30);
  const back = await post(dp.url, '/v1/chat/completions', chat(system, 'q'), { 'x-dynamo-dp-rank': String(w.decode_dp_rank), 'x-dynamo-worker-instance-id': String(w.decode_worker_id) });
  assert.ok(back.json.usage.prompt_tokens_details.cached_tokens / back.json.usage.prompt_tokens >= 0.9);
  const bad = await post(dp.url, '/v1/chat/completions', chat(system, 'q', { dp_rank: 2 }));
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.code, 'invalid_dp_rank');
  assert.match(bad.json.error.message, /dp_rank 2 is out of range: worker \d has 2 data-parallel ranks/);
  const ok = await post(dp.url, '/v1/chat/completions', chat('still', 'serving'));
  assert.equal(ok.status, 200);
});
