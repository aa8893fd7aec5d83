// Request limits through a real server (docs/fields.md): message shapes are checked before the
// template renders anything (a string `tool_calls` is a 400, not a 13M-token prompt), the
// prompt is capped when the context length is unknown (--max-prompt-tokens), the context
// length comes from the engine's GetModelInfo when the model folder has no config.json
// (the test tokenizer folder has none), and validation runs before any tokenization
// (observed through the tokenizer histogram of /metrics).

import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { QWEN3, startPortico, type Proc } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';

const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1']);

async function post(server: Proc, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function stillServes(server: Proc): Promise<void> {
  const ok = await post(server, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'ok' }], max_tokens: 2 });
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, 'VmRSS in /proc/<pid>/status');
  return Number(m[1]) * 1024;
}

/** How many prompts the server has rendered and tokenized (portico_frontend_tokenizer_latency_seconds_count). */
async function tokenized(server: Proc): Promise<number> {
  const text = await fetch(`${server.url}/metrics`).then((r) => r.text());
  const m = /^portico_frontend_tokenizer_latency_seconds_count\{model="m"\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

const HISTORY = [{ role: 'user', content: 'What is the weather?' }];

test('a 1 MB string tool_calls is a 400 naming messages[1].tool_calls, the server keeps its memory and still serves', async () => {
  const server = served.server;
  const pid = server.child.pid!;
  await stillServes(server);
  const before = rssBytes(pid);
  const body = { model: 'm', messages: [...HISTORY, { role: 'assistant', content: null, tool_calls: 'x'.repeat(1 << 20) }] };
  for (let i = 0; i < 3; i++) {
    const r = await post(server, '/v1/chat/completions', body);
    assert.equal(r.status, 400);
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.equal(r.json.error.message, '`messages[1].tool_calls` must be an array of tool call objects, got a string');
    assert.equal(r.json.error.param, 'messages[1].tool_calls');
  }
  // Rendered, the string was 13M tokens and +0.7 GB that stayed; refused, it costs the body.
  const grown = rssBytes(pid) - before;
  assert.ok(grown < 200 * 1024 * 1024, `RSS grew by ${Math.round(grown / 1048576)} MB`);
  await stillServes(server);
});

test('the same shape check guards every endpoint that renders messages: /tokenize, the raw prompt, the messages cache', async () => {
  const server = served.server;
  const messages = [...HISTORY, { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: 42 } }] }];
  const tok = await post(server, '/tokenize', { model: 'm', messages });
  assert.equal(tok.status, 400);
  assert.equal(tok.json.error.param, 'messages[1].tool_calls[0].function.arguments');
  const raw = await post(server, '/v1/chat/completions', { model: 'm', messages, nvext: { use_raw_prompt: true } });
  assert.equal(raw.status, 400);
  assert.equal(raw.json.error.param, 'messages[1].tool_calls[0].function.arguments');
  // A long conversation goes through the per-message cache: a bad message after good ones.
  const long = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i} `.repeat(20) }));
  const first = await post(server, '/v1/chat/completions', { model: 'm', messages: long, max_tokens: 1 });
  assert.equal(first.status, 200, JSON.stringify(first.json));
  const bad = await post(server, '/v1/chat/completions', { model: 'm', messages: [...long, { role: 'assistant', tool_calls: 'abc' }], max_tokens: 1 });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.param, 'messages[40].tool_calls');
  // A well-formed tool call history still renders.
  const good = [...HISTORY, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"city":"Paris"}' } }] }, { role: 'tool', tool_call_id: 'c', content: 'sunny' }];
  const ok = await post(server, '/v1/chat/completions', { model: 'm', messages: good, max_tokens: 2 });
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
});

test('validation runs before any tokenization: bad logit_bias / stop ids / worker ids tokenize nothing; a good request does', async () => {
  const server = served.server;
  const start = await tokenized(server);
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ logit_bias: { '999999999': 1 } }, 'logit_bias', /token id 999999999, outside the vocabulary/],
    [{ stop_token_ids: [999999999] }, 'stop_token_ids', /outside the vocabulary/],
    [{ nvext: { backend_instance_id: 99 } }, '', /worker 99 does not exist/],
    [{ max_tokens: 2 ** 32 }, 'max_tokens', /32-bit unsigned integer/],
  ];
  for (const [extra, param, message] of cases) {
    for (const path of ['/v1/chat/completions', '/v1/completions']) {
      const base = path === '/v1/completions' ? { model: 'm', prompt: 'hello there' } : { model: 'm', messages: HISTORY };
      const r = await post(server, path, { ...base, ...extra });
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.match(r.json.error.message, message);
      if (param) assert.equal(r.json.error.param, param);
    }
  }
  assert.equal(await tokenized(server), start, 'no prompt was rendered or tokenized');
  await stillServes(server);
  assert.equal(await tokenized(server), start + 1, 'the metric counts a rendered prompt');
});

test('a request with an invalid field and messages that cannot render gets the validation error', async () => {
  const server = served.server;
  const unrenderable = [...HISTORY, { role: 'assistant', tool_calls: 'x' }];
  const r = await post(server, '/v1/chat/completions', { model: 'm', messages: unrenderable, temperature: 5 });
  assert.equal(r.status, 400);
  assert.equal(r.json.error.param, 'temperature');
  const vocab = await post(server, '/v1/chat/completions', { model: 'm', messages: unrenderable, logit_bias: { '999999999': 1 } });
  assert.equal(vocab.status, 400);
  assert.equal(vocab.json.error.param, 'logit_bias');
  // Admission before validation: an undeliverable field is refused as unsupported, even next to an invalid one.
  const admission = await post(server, '/v1/chat/completions', { model: 'm', messages: unrenderable, temperature: 5, bad_words_token_ids: 'oops' });
  assert.equal(admission.status, 400);
  assert.equal(admission.json.error.code, 'unsupported_parameter');
  assert.equal(admission.json.error.param, 'bad_words_token_ids');
  await stillServes(server);
});

test('seed: the whole int64 range is accepted, one past it is a 400', async () => {
  const server = served.server;
  for (const seed of ['9223372036854775807', '-9223372036854775808', '0']) {
    const r = await post(server, '/v1/chat/completions', `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":1,"seed":${seed}}`);
    assert.equal(r.status, 200, `${seed}: ${JSON.stringify(r.json)}`);
  }
  for (const seed of ['9223372036854775808', '-9223372036854775809']) {
    const r = await post(server, '/v1/chat/completions', `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":1,"seed":${seed}}`);
    assert.equal(r.status, 400);
    assert.equal(r.json.error.param, 'seed');
    assert.match(r.json.error.message, new RegExp(`got ${seed}`));
  }
});

// ---- context length from GetModelInfo, and the prompt cap when nobody knows it ----

let engine64: Proc;
let front64: Proc;
let engineBlind: Proc;
let frontBlind: Proc;

before(async () => {
  engine64 = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--max-model-len', '64']);
  front64 = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', `grpc://127.0.0.1:${engine64.port}`]);
  engineBlind = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--protocol', 'vllm', '--hide-context-length']);
  frontBlind = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--max-prompt-tokens', '50', '--worker', `vllm+grpc://127.0.0.1:${engineBlind.port}`]);
});

after(async () => {
  await Promise.all([front64?.stop(), frontBlind?.stop()]);
  await Promise.all([engine64?.stop(), engineBlind?.stop()]);
});

test("without config.json the context length is the engine's (GetModelInfo): max_tokens + prompt past it is a 400 with the numbers", async () => {
  const models = (await fetch(`${front64.url}/v1/models`).then((r) => r.json())) as any;
  assert.equal(models.data[0].max_model_len, 64);
  const r = await post(front64, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 });
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, 'context_length_exceeded');
  assert.equal(r.json.error.param, 'max_tokens');
  assert.match(r.json.error.message, /^This model's maximum context length is 64 tokens\. However, you requested 1\d\d tokens \(\d+ in the messages, 100 in the completion\)/);
  const long = await post(front64, '/v1/completions', { model: 'm', prompt: 'word '.repeat(100), max_tokens: 1 });
  assert.equal(long.status, 400);
  assert.equal(long.json.error.code, 'context_length_exceeded');
  assert.equal(long.json.error.param, 'prompt');
  assert.match(long.json.error.message, /maximum context length is 64 tokens\. However, your prompt resulted in 10\d tokens/);
  // Within the context, and with no max_tokens (the engine's default applies), requests are served.
  const fits = await post(front64, '/v1/completions', { model: 'm', prompt: 'hello', max_tokens: 10 });
  assert.equal(fits.status, 200, JSON.stringify(fits.json));
  const open = await post(front64, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(open.status, 200, JSON.stringify(open.json));
});

test('with no context length anywhere, --max-prompt-tokens caps the prompt: a 10 MB completion prompt is a 400 with the numbers', async () => {
  const models = (await fetch(`${frontBlind.url}/v1/models`).then((r) => r.json())) as any;
  assert.equal(models.data[0].max_model_len, undefined);
  const huge = await post(frontBlind, '/v1/completions', { model: 'm', prompt: 'a b '.repeat(10 * 1024 * 256), max_tokens: 1 });
  assert.equal(huge.status, 400);
  assert.equal(huge.json.error.code, 'context_length_exceeded');
  assert.equal(huge.json.error.param, 'prompt');
  assert.match(huge.json.error.message, /^The prompt is \d{7,} tokens long; this server accepts at most 50 prompt tokens \(--max-prompt-tokens\) while the model's context length is unknown/);
  const chat = await post(frontBlind, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'word '.repeat(60) }], max_tokens: 1 });
  assert.equal(chat.status, 400);
  assert.equal(chat.json.error.param, 'messages');
  assert.match(chat.json.error.message, /at most 50 prompt tokens/);
  const ok = await post(frontBlind, '/v1/completions', { model: 'm', prompt: 'hello', max_tokens: 2 });
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
});
