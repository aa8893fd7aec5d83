// Request-side and metrics conformance, through a running server with the real openai SDK
// (unary and streamed): top_p 0 refused at the frontend, prefill routing headers ignored
// and counted (the nvext prefill fields keep their 400), usage.prompt_tokens_details
// always present, and a live /metrics that passes `promtool check metrics` (Debian
// package `prometheus`, installed by .ci/run), with Dynamo's model_* and per-worker load gauges.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertPromtoolClean } from './helpers/promtool.js';
import OpenAI from 'openai';
import { QWEN3, runPortico } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { eventually } from './helpers/eventually.js';

const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'sim', '--mock-workers', '2'], (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

// The sim engine ends a choice with EOS on 2% of its steps; the assertions below read
// finish_reason 'length', so every request asks to go on past EOS.
const chat = (extra: object = {}) => ({ model: 'm', messages: [{ role: 'user', content: 'hello' }], max_tokens: 3, ignore_eos: true, ...extra }) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;

async function streamUsage(c: OpenAI, extra: object = {}, headers: Record<string, string> = {}): Promise<OpenAI.CompletionUsage | undefined> {
  const s = await c.chat.completions.create({ ...chat(extra), stream: true, stream_options: { include_usage: true } } as OpenAI.ChatCompletionCreateParamsStreaming, { headers });
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of s) if (chunk.usage) usage = chunk.usage;
  return usage;
}

const is400 = (e: unknown) => e instanceof OpenAI.APIError && e.status === 400;

async function metricsText(): Promise<string> {
  const r = await fetch(`${served.server.url}/metrics`);
  assert.equal(r.status, 200);
  return r.text();
}

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('top_p 0 is a 400 at the frontend (unary and streamed); the next request succeeds', async () => {
  const c = served.client;
  await assert.rejects(c.chat.completions.create(chat({ top_p: 0 })), (e: unknown) => is400(e) && /top_p/.test((e as Error).message));
  await assert.rejects(streamUsage(c, { top_p: 0 }), is400);
  await assert.rejects(c.completions.create({ model: 'm', prompt: 'hi', max_tokens: 2, top_p: 0 }), is400);
  const r = await c.chat.completions.create(chat({ top_p: 1e-6, top_k: 0 }));
  assert.equal(r.choices[0].finish_reason, 'length', 'a tiny top_p and top_k 0 (disabled) are served');
});

test('prefill routing headers are ignored and counted; the nvext prefill fields keep their 400', async () => {
  const c = served.client;
  const before = value(await metricsText(), 'portico_frontend_ignored_routing_headers_total{header="x-dynamo-prefill-instance-id"}') ?? 0;
  const h = { 'x-dynamo-prefill-instance-id': '7', 'x-prefill-dp-rank': '1' };
  const r = await c.chat.completions.create(chat(), { headers: h });
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.ok(await streamUsage(c, {}, h));
  const text = await metricsText();
  assert.equal(value(text, 'portico_frontend_ignored_routing_headers_total{header="x-dynamo-prefill-instance-id"}'), before + 2);
  assert.ok((value(text, 'portico_frontend_ignored_routing_headers_total{header="x-prefill-dp-rank"}') ?? 0) >= 2);
  await assert.rejects(c.chat.completions.create(chat({ nvext: { prefill_worker_id: 0 } })), (e: unknown) => is400(e) && /disaggregated prefill/.test((e as Error).message));
  await assert.rejects(c.chat.completions.create(chat({ nvext: { prefill_dp_rank: 0 } })), is400);
  assert.ok(await c.chat.completions.create(chat()));
});

test('usage.prompt_tokens_details.cached_tokens is always present (0 when nothing was cached)', async () => {
  const c = served.client;
  const u = (await c.chat.completions.create(chat({ messages: [{ role: 'user', content: `fresh ${Math.random()}` }] }))).usage;
  assert.equal(typeof u?.prompt_tokens_details?.cached_tokens, 'number');
  const s = await streamUsage(c, { messages: [{ role: 'user', content: `fresh ${Math.random()}` }] });
  assert.equal(typeof s?.prompt_tokens_details?.cached_tokens, 'number');
  const cu = (await c.completions.create({ model: 'm', prompt: `fresh ${Math.random()}`, max_tokens: 2 })).usage;
  assert.equal(typeof cu?.prompt_tokens_details?.cached_tokens, 'number');
});

test('a live /metrics passes promtool check metrics, with Dynamo-shaped request counts', async () => {
  const c = served.client;
  await c.chat.completions.create(chat());
  await streamUsage(c);
  await assert.rejects(c.chat.completions.create(chat({ top_p: 0 })), is400);
  const before = await metricsText();
  await fetch(`${served.server.url}/health`);
  await fetch(`${served.server.url}/live`);
  const text = await metricsText();
  assertPromtoolClean(text);
  assert.match(text, /^# TYPE portico_frontend_disconnected_clients gauge$/m);
  assert.ok((value(text, 'portico_frontend_output_tokens_total{model="m"}') ?? 0) > 0);
  const ok = 'portico_frontend_requests_total{model="m",endpoint="/v1/chat/completions",request_type="unary",status="success",error_type=""}';
  assert.ok((value(text, ok) ?? 0) >= 1);
  assert.ok((value(text, 'portico_frontend_requests_total{model="",endpoint="/v1/chat/completions",request_type="unary",status="error",error_type="validation"}') ?? 0) >= 1);
  assert.equal(value(text, ok), value(before, ok));
  assert.doesNotMatch(text, /endpoint="\/(metrics|health|live)"/, 'scrapes and probes are not counted');
});

test('/metrics has Dynamo\'s model_* gauges from the engines\' declared configuration, promtool clean', async () => {
  const text = await metricsText();
  assertPromtoolClean(text);
  // the sim engine declares: context 32768, max_num_seqs 256, max_num_batched_tokens 8192,
  // block size 16 and max_total_num_tokens 1e6 (= 62500 blocks of 16)
  assert.equal(value(text, 'portico_frontend_model_context_length{model="m"}'), 32768);
  assert.equal(value(text, 'portico_frontend_model_max_num_seqs{model="m"}'), 256);
  assert.equal(value(text, 'portico_frontend_model_max_num_batched_tokens{model="m"}'), 8192);
  assert.equal(value(text, 'portico_frontend_model_kv_cache_block_size{model="m"}'), 16);
  assert.equal(value(text, 'portico_frontend_model_total_kv_blocks{model="m"}'), 62500);
  for (const m of ['worker_active_decode_blocks', 'worker_active_prefill_tokens']) {
    assert.match(text, new RegExp(`^# TYPE portico_frontend_${m} gauge$`, 'm'));
  }
});

test('worker_active_decode_blocks counts a request in flight on its worker (Dynamo\'s labels), and 0 once it ended', async () => {
  const c = served.client;
  const prompt = 'a long prompt that spans several blocks of sixteen tokens each '.repeat(8);
  const ac = new AbortController();
  const stream = await c.chat.completions.create({ ...chat({ max_tokens: 30000 }), messages: [{ role: 'user', content: prompt }], stream: true, nvext: { extra_fields: ['worker_id'] } } as any, { signal: ac.signal });
  const it = (stream as any)[Symbol.asyncIterator]();
  await it.next(); // the role chunk: the request has been dispatched to its worker
  const text = await metricsText();
  const series = text.split('\n').filter((l) => l.startsWith('portico_frontend_worker_active_decode_blocks{'));
  assert.equal(series.length, 2, 'one series per worker');
  for (const l of series) assert.match(l, /^portico_frontend_worker_active_decode_blocks\{model="m",worker_id="[01]",dp_rank="0",worker_type="decode"\} \d+$/);
  const held = series.map((l) => Number(l.split(' ')[1]));
  assert.ok(Math.max(...held) > 0, `the in-flight prompt's blocks are counted: ${series.join(', ')}`);
  assert.equal(Math.min(...held), 0, 'the other worker holds none');
  ac.abort();
  await it.return?.();
  // the cancelled request's load is released when its generation ends (seen in /metrics)
  const zero = (t: string) => t.split('\n').filter((l) => l.startsWith('portico_frontend_worker_active_decode_blocks{')).every((l) => l.endsWith(' 0'));
  await eventually(async () => zero(await metricsText()), 'the cancelled request releases its blocks');
});

test('--metrics-prefix is validated', async () => {
  const r = await runPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--metrics-prefix', 'bad-prefix']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /--metrics-prefix must match/);
});
