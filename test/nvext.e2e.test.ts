// nvext (spec 001) through the real server: response extensions, direct routing by
// body field and by header (headers win), pre-tokenized prompts, annotations, and
// every refusal with its status.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startPortico, QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { Model } from '../src/native/core.js';

const MODEL = 'qwen3';
const tok = Model.load(QWEN3);

const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '3']);

async function chat(body: Record<string, unknown>, headers: Record<string, string> = {}, url = served.server.url): Promise<{ status: number; text: string; json: any }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello world' }], ...body }),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* an event stream */
  }
  return { status: res.status, text, json };
}

test('extra_fields returns worker_id, timing, stop_reason and completion_token_ids', async () => {
  const r = await chat({ nvext: { use_raw_prompt: true, extra_fields: ['worker_id', 'timing', 'stop_reason', 'completion_token_ids'] } });
  assert.equal(r.status, 200);
  const nv = r.json.nvext;
  assert.ok(Number.isInteger(nv.worker_id.decode_worker_id));
  assert.ok(nv.timing.total_ms >= nv.timing.ttft_ms && nv.timing.ttft_ms >= 0);
  assert.equal(nv.timing.prompt_tokens, r.json.usage.prompt_tokens);
  assert.equal(nv.timing.completion_tokens, r.json.usage.completion_tokens);
  assert.deepEqual(nv.completion_token_ids, Array.from(tok.encode('hello world', false)));
  assert.ok('stop_reason' in nv);
});

test('without extra_fields there is no nvext in the response', async () => {
  const r = await chat({ nvext: { use_raw_prompt: true } });
  assert.equal(r.json.nvext, undefined);
});

test('streams carry the response nvext in a chunk before [DONE]', async () => {
  const r = await chat({ stream: true, nvext: { use_raw_prompt: true, extra_fields: ['worker_id'] } });
  const chunks = r.text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
  const withNv = chunks.filter((c) => c.nvext);
  assert.equal(withNv.length, 1);
  assert.deepEqual(withNv[0].choices, []);
  assert.ok(Number.isInteger(withNv[0].nvext.worker_id.decode_worker_id));
});

test('backend_instance_id routes to that worker; the header beats the body', async () => {
  for (const id of [0, 1, 2, 1]) {
    const r = await chat({ nvext: { use_raw_prompt: true, backend_instance_id: id, extra_fields: ['worker_id'] } });
    assert.equal(r.json.nvext.worker_id.decode_worker_id, id);
  }
  const h = await chat({ nvext: { use_raw_prompt: true, backend_instance_id: 0, extra_fields: ['worker_id'] } }, { 'x-dynamo-worker-instance-id': '2' });
  assert.equal(h.json.nvext.worker_id.decode_worker_id, 2);
  const alias = await chat({ nvext: { use_raw_prompt: true, extra_fields: ['worker_id'] } }, { 'x-worker-instance-id': '1' });
  assert.equal(alias.json.nvext.worker_id.decode_worker_id, 1);
});

test('token_data with a routed worker skips tokenization', async () => {
  const ids = Array.from(tok.encode('pre-tokenized ✓', false));
  const r = await chat({ messages: [{ role: 'user', content: 'ignored' }], nvext: { token_data: ids, backend_instance_id: 1 } });
  assert.equal(r.status, 200);
  assert.equal(r.json.choices[0].message.content, 'pre-tokenized ✓');
});

test('annotations send formatted_prompt and token_ids events first', async () => {
  const r = await chat({ stream: true, nvext: { annotations: ['formatted_prompt', 'token_ids'] } });
  const events = r.text.split('\n\n');
  assert.ok(events[0].startsWith('event: formatted_prompt\ndata: '));
  assert.equal(JSON.parse(events[0].split('data: ')[1]), '<|im_start|>user\nhello world<|im_end|>\n<|im_start|>assistant\n');
  assert.ok(events[1].startsWith('event: token_ids\ndata: ['));
  assert.ok(r.text.endsWith('data: [DONE]\n\n'));
});

test('greed_sampling is accepted alone and refused with n > 1', async () => {
  assert.equal((await chat({ nvext: { greed_sampling: true } })).status, 200);
  const r = await chat({ n: 2, temperature: 1, nvext: { greed_sampling: true } });
  assert.equal(r.status, 400);
  assert.match(r.json.error.message, /greed_sampling/);
});

test('agent_hints of the right types are accepted', async () => {
  const r = await chat({ nvext: { agent_hints: { priority: -3, strict_priority: 2, osl: 128, speculative_prefill: false } } });
  assert.equal(r.status, 200);
});

const REFUSED: [string, Record<string, unknown>, Record<string, string>, number, RegExp][] = [
  ['an unknown nvext key', { nvext: { nope: 1 } }, {}, 400, /`nvext\.nope`/],
  ['an unknown agent_hints key', { nvext: { agent_hints: { nope: 1 } } }, {}, 400, /`nvext\.agent_hints\.nope`/],
  ['a negative strict_priority', { nvext: { agent_hints: { strict_priority: -1 } } }, {}, 400, /strict_priority/],
  ['a fractional osl', { nvext: { agent_hints: { osl: 1.5 } } }, {}, 400, /`nvext\.agent_hints\.osl` must be an integer/],
  ['an unknown worker id', { nvext: { backend_instance_id: 9 } }, {}, 400, /worker 9 does not exist/],
  ['an unknown worker id by header', {}, { 'x-dynamo-worker-instance-id': '7' }, 400, /worker 7 does not exist/],
  ['a malformed worker header', {}, { 'x-dynamo-worker-instance-id': 'abc' }, 400, /must be a non-negative integer/],
  ['prefill_worker_id without prefill workers', { nvext: { prefill_worker_id: 0 } }, {}, 400, /disaggregated prefill/],
  ['max_thinking_tokens', { nvext: { max_thinking_tokens: 10 } }, {}, 400, /thinking budget/],
  ['an unknown extra field', { nvext: { extra_fields: ['experts'] } }, {}, 400, /unknown field "experts"/],
  ['extra field routed_experts (no engine gives it)', { nvext: { extra_fields: ['routed_experts'] } }, {}, 400, /"routed_experts" cannot be served/],
  ['extra field engine_data (no engine gives it)', { nvext: { extra_fields: ['engine_data'] } }, {}, 400, /"engine_data" cannot be served/],
  ['an unknown annotation', { nvext: { annotations: ['llm_metrics'] } }, {}, 400, /unknown annotation/],
  ['token_data outside the vocabulary', { nvext: { token_data: [99_999_999], backend_instance_id: 0 } }, {}, 400, /outside the vocabulary/],
  ['conflicting worker ids', { nvext: { backend_instance_id: 0, decode_worker_id: 1 } }, {}, 400, /different workers/],
  ['nvext not an object', { nvext: [1] }, {}, 400, /`nvext` must be an object/],
];

for (const [name, body, headers, status, message] of REFUSED) {
  test(`nvext with ${name} is a ${status}`, async () => {
    const r = await chat(body, headers);
    assert.equal(r.status, status);
    assert.match(r.json.error.message, message);
    assert.equal((await chat({ nvext: { use_raw_prompt: true } })).json.choices[0].message.content, 'hello world');
  });
}

test('PORTICO_DISABLE_NVEXT=1 refuses nvext and ignores routing headers', async (t) => {
  const off = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '1'], { PORTICO_DISABLE_NVEXT: '1' });
  t.after(() => off.stop());
  const r = await chat({ nvext: { use_raw_prompt: true } }, {}, off.url);
  assert.equal(r.status, 400);
  assert.match(r.json.error.message, /`nvext` is disabled/);
  const h = await chat({}, { 'x-dynamo-worker-instance-id': '5' }, off.url);
  assert.equal(h.status, 200, 'the routing header is ignored, not an unknown worker');
});
