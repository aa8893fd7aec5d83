// GET /metrics after a known sequence of requests: counts, token histograms, in-flight
// gauges back at zero, and a client disconnect counted.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startPortico, QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { HANG_GUARD_MS } from './helpers/eventually.js';
import { seriesOf } from './helpers/metrics-text.js';


const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'sim', '--mock-workers', '2'], (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

async function scrape(): Promise<Map<string, number>> {
  const res = await fetch(`${served.server.url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return seriesOf(await res.text());
}

test('metrics count what was served', async () => {
  let completion = 0;
  for (let i = 0; i < 2; i++) {
    const r = await served.client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: `hello ${i}` }], max_tokens: 5, ignore_eos: true } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    completion += r.usage!.completion_tokens;
  }
  const stream = await served.client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'streamed' }], max_tokens: 4, ignore_eos: true, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
  for await (const _ of stream) completion += 0;
  completion += 4;
  await assert.rejects(served.client.chat.completions.create({ model: 'm', messages: [], max_tokens: 1 }));

  const m = await scrape();
  const P = 'portico_frontend_';
  assert.equal(m.get(`${P}requests_total{model="m",endpoint="/v1/chat/completions",request_type="unary",status="success",error_type=""}`), 2);
  assert.equal(m.get(`${P}requests_total{model="m",endpoint="/v1/chat/completions",request_type="stream",status="success",error_type=""}`), 1);
  assert.equal(m.get(`${P}requests_total{model="",endpoint="/v1/chat/completions",request_type="unary",status="error",error_type="validation"}`), 1, 'a request rejected before its model was known');
  assert.equal(m.get(`${P}input_sequence_tokens_count{model="m"}`), 3);
  assert.equal(m.get(`${P}output_sequence_tokens_count{model="m"}`), 3);
  assert.equal(m.get(`${P}output_sequence_tokens_sum{model="m"}`), completion);
  assert.equal(m.get(`${P}time_to_first_token_seconds_count{model="m"}`), 3);
  assert.equal(m.get(`${P}request_duration_seconds_count{model="m"}`), 3);
  assert.equal(m.get(`${P}inflight_requests{model="m"}`), 0);
  assert.equal(m.get(`${P}tokenizer_latency_seconds_count{model="m"}`), 3);
  assert.ok((m.get(`${P}inter_token_latency_seconds_count{model="m"}`) ?? 0) >= 3 * 3, 'one ITL sample per token after the first');
  assert.equal(m.get(`${P}worker_healthy{model="m",worker="0"}`), 1);
  assert.ok((m.get('process_resident_memory_bytes') ?? 0) > 10_000_000, 'process memory is reported');
  assert.ok((m.get('nodejs_heap_used_bytes') ?? 0) > 0);
  const busy = m.get('nodejs_eventloop_utilization') ?? -1;
  assert.ok(busy > 0 && busy <= 1, `event-loop utilization is a share of the time since start: ${busy}`);
  // The lag is the delay of a callback queued at one scrape, read at the next.
  const again = await scrape();
  assert.ok((again.get('nodejs_eventloop_lag_seconds') ?? 0) > 0, 'the second scrape reports the lag the first one queued');
  assert.equal(m.get(`${P}stream_backpressure_pauses_total{model="m"}`), 0, 'fast readers never pause a stream');
  assert.equal(m.get(`${P}worker_active_requests{model="m",worker="1"}`), 0);
});

test('a client that disconnects mid-stream is counted and the in-flight gauge returns to zero', async () => {
  const before = (await scrape()).get('portico_frontend_disconnected_clients{model="m"}') ?? 0;
  const ac = new AbortController();
  const res = await fetch(`${served.server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'long' }], max_tokens: 10_000, ignore_eos: true, stream: true }),
    signal: ac.signal,
  });
  const reader = res.body!.getReader();
  await reader.read();
  assert.equal((await scrape()).get('portico_frontend_inflight_requests{model="m"}'), 1);
  ac.abort();
  const deadline = Date.now() + HANG_GUARD_MS;
  let m = await scrape();
  while (Date.now() < deadline && (m.get('portico_frontend_inflight_requests{model="m"}') ?? 1) !== 0) {
    await new Promise((r) => setTimeout(r, 20));
    m = await scrape();
  }
  assert.equal(m.get('portico_frontend_inflight_requests{model="m"}'), 0);
  assert.equal(m.get('portico_frontend_disconnected_clients{model="m"}'), before + 1);
  assert.equal(m.get('portico_frontend_worker_active_requests{model="m",worker="0"}'), 0);
  assert.equal(m.get('portico_frontend_worker_active_requests{model="m",worker="1"}'), 0);
});

test('the metric prefix is configurable', async (t) => {
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1', '--metrics-prefix', 'acme_']);
  t.after(() => s.stop());
  const text = await (await fetch(`${s.url}/metrics`)).text();
  assert.match(text, /^# HELP acme_requests_total /m);
  assert.doesNotMatch(text, /portico_frontend_/);
});
