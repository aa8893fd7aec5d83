// KV-aware routing against engines whose block size is not --router-block-size: two
// vLLM-protocol mock engines with 128-token blocks (vLLM's CPU default) and two
// SGLang-protocol ones with page size 1 (SGLang's default), each behind its own
// `portico serve --router-mode kv` with no block-size flag. The router learns each
// worker's size, its index fills from the engines' events, shared prefixes come back
// to the worker holding them (cached_tokens > 0), and /health and /metrics say so.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';
import { eventually } from './helpers/eventually.js';

const procs: Proc[] = [];
after(async () => {
  await Promise.all(procs.map((p) => p.stop()));
});

async function start(args: string[]): Promise<Proc> {
  const p = await startPortico(args);
  procs.push(p);
  return p;
}

async function engines(protocol: 'vllm' | 'sglang', blockSize: number): Promise<string[]> {
  const scheme = protocol === 'vllm' ? 'vllm+grpc' : 'grpc';
  const out: string[] = [];
  for (let i = 0; i < 2; i++) {
    const e = await start(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'sim', '--protocol', protocol, '--block-size', String(blockSize), '--step-ms', '1', '--eos-probability', '0']);
    out.push(`${scheme}://127.0.0.1:${e.port}`);
  }
  return out;
}

const MODEL = 'qwen3';
const system = (tag: string) => Array.from({ length: 400 }, (_, i) => `${tag}${i}`).join(' ');

async function chat(url: string, tag: string, turn: number) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      max_tokens: 2,
      messages: [
        { role: 'system', content: system(tag) },
        { role: 'user', content: `turn ${turn}` },
      ],
      nvext: { extra_fields: ['worker_id'] },
    }),
  });
  const j = (await res.json()) as { usage: { prompt_tokens_details?: { cached_tokens?: number } }; nvext: { worker_id: { decode_worker_id: number } } };
  assert.equal(res.status, 200, JSON.stringify(j));
  return { worker: j.nvext.worker_id.decode_worker_id, cached: j.usage.prompt_tokens_details?.cached_tokens ?? 0 };
}

async function metric(url: string, re: RegExp): Promise<number[]> {
  const text = await fetch(`${url}/metrics`).then((r) => r.text());
  return [...text.matchAll(re)].map((m) => Number(m[1]));
}

for (const [protocol, blockSize] of [
  ['vllm', 128],
  ['sglang', 1],
] as const) {
  test(`kv routing with ${protocol} engines of ${blockSize}-token blocks needs no block-size flag`, async () => {
    const workers = await engines(protocol, blockSize);
    const fe = await start(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--router-mode', 'kv', '--router-ttl-secs', '0.001', ...workers.flatMap((w) => ['--worker', w])]);
    // Each worker's block size is learnt from its engine.
    await eventually(async () => {
      const h = (await fetch(`${fe.url}/health`).then((r) => r.json())) as { models: { kv_routing?: { workers: { block_size: number; block_size_from: string }[] } }[] };
      const ws = h.models[0]!.kv_routing?.workers ?? [];
      return ws.length === 2 && ws.every((w) => w.block_size === blockSize && w.block_size_from !== 'fallback');
    }, 'both workers report their block size');
    for (const tag of ['alpha', 'beta']) {
      const first = await chat(fe.url, tag, 0);
      // The worker's stored-block events reach the index before the follow-ups.
      await eventually(async () => (await metric(fe.url, new RegExp(`worker_kv_blocks\\{model="${MODEL}",worker="${first.worker}"\\} (\\d+)`, 'g')))[0]! > 0, 'the index holds the first turn\'s blocks');
      for (let turn = 1; turn <= 3; turn++) {
        const r = await chat(fe.url, tag, turn);
        assert.equal(r.worker, first.worker, `${tag} turn ${turn} went back to the worker holding its prefix`);
        assert.ok(r.cached > 0, `${tag} turn ${turn} was served from the engine's prefix cache`);
      }
    }
    assert.deepEqual(await metric(fe.url, new RegExp(`model_kv_cache_block_size\\{model="${MODEL}"\\} (\\d+)`, 'g')), [blockSize]);
    assert.deepEqual(await metric(fe.url, /kv_events_unapplied_total\{[^}]*\} (\d+)/g), [], 'every stored event was indexed');
    const h = (await fetch(`${fe.url}/health`).then((r) => r.json())) as { models: { kv_routing: { warnings?: string[] } }[] };
    assert.equal(h.models[0]!.kv_routing.warnings, undefined);
  });
}
