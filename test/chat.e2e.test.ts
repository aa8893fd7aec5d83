// End to end through the real server: the openai SDK → uWS → gate → native template
// and tokenizer → gRPC → mock echo engines → native detokenizer → OpenAI JSON / SSE.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { Model } from '../src/native/core.js';

const tok = Model.load(QWEN3);

const MODEL = 'Qwen/Qwen3-0.6B';
const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '2'], (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

const SAMPLES: Record<string, string> = {
  ascii: 'Hello, world! The quick brown fox jumps over 13 lazy dogs.',
  cjk: '你好，世界！日本語のテキストも大丈夫です。한국어 문장.',
  emoji: 'Family: 👨‍👩‍👧‍👦, flags 🇫🇷🇯🇵, skin tone 👍🏽 and 🦀 — done.',
  whitespace: '  leading spaces,\ttabs,\n\nnewlines and trailing spaces  ',
};

function raw(text: string) {
  // nvext.use_raw_prompt: the echo engine then returns exactly the text sent.
  return { model: MODEL, messages: [{ role: 'user' as const, content: text }], nvext: { use_raw_prompt: true } };
}

for (const [name, text] of Object.entries(SAMPLES)) {
  test(`echo round trip preserves ${name} text exactly (non-streaming)`, async () => {
    const r = await served.client.chat.completions.create(raw(text) as OpenAI.ChatCompletionCreateParamsNonStreaming);
    assert.equal(r.object, 'chat.completion');
    assert.equal(r.model, MODEL);
    assert.equal(r.choices[0].message.role, 'assistant');
    assert.equal(r.choices[0].message.content, text);
    assert.equal(r.choices[0].finish_reason, 'stop');
    assert.ok(r.usage && r.usage.prompt_tokens > 0);
    assert.equal(r.usage!.completion_tokens, r.usage!.prompt_tokens, 'echo returns every prompt token');
    assert.equal(r.usage!.total_tokens, r.usage!.prompt_tokens + r.usage!.completion_tokens);
  });

  test(`echo round trip preserves ${name} text exactly (streaming)`, async () => {
    const stream = await served.client.chat.completions.create({ ...raw(text), stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
    let content = '';
    let finish: string | null = null;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      assert.equal(chunk.object, 'chat.completion.chunk');
      const c = chunk.choices[0];
      for (const ch of c.delta.content ?? '') assert.notEqual(ch, '\uFFFD', 'no half characters are emitted');
      content += c.delta.content ?? '';
      if (c.finish_reason) finish = c.finish_reason;
    }
    assert.equal(content, text);
    assert.equal(finish, 'stop');
    assert.ok(chunks > 2, 'the text arrives over several chunks');
  });
}

test('the chat template is applied: the echo engine returns the rendered Qwen3 prompt', async () => {
  const r = await served.client.chat.completions.create({
    model: MODEL,
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hi there' },
    ],
    skip_special_tokens: false,
    ignore_eos: true, // the echoed prompt holds <|im_end|>, an EOS id of Qwen3
  } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(r.choices[0].message.content, '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n');
});

test('a long conversation growing turn by turn renders as a cold render at every turn (the server reuses the parsed earlier messages)', async () => {
  // Qwen3 drops the reasoning of assistant turns before the last user query, so earlier
  // turns render differently once a user turn follows: the echoed prompt must follow.
  const system = 'Rules: be brief, "quote" \\ path\n\t日本語 🦊 <tool_call>x</tool_call>\n'.repeat(80);
  const turns: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: system },
    { role: 'user', content: 'Find the bug.' },
    { role: 'assistant', content: 'Looking.', reasoning_content: 'Read the file first.' } as OpenAI.ChatCompletionMessageParam,
    { role: 'user', content: 'And now?' },
    { role: 'assistant', content: '<think>\nthink more\n</think>\n\nDone.' },
    { role: 'user', content: 'Thanks.' },
  ];
  for (let n = 2; n <= turns.length; n++) {
    const messages = turns.slice(0, n);
    const body = Buffer.from(JSON.stringify(messages));
    tok.clearPrefixCache();
    const want = tok.renderChat(body, 0, body.length, -1, -1, true, null);
    const r = await served.client.chat.completions.create({
      model: MODEL,
      messages,
      skip_special_tokens: false,
      ignore_eos: true,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    assert.equal(r.choices[0].message.content, want, `${n} messages`);
    assert.equal(r.usage!.prompt_tokens, tok.encode(want, false).length);
  }
});

test('special tokens are skipped by default', async () => {
  const r = await served.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi there' }], ignore_eos: true } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(r.choices[0].message.content, 'user\nHi there\nassistant\n');
});

test('an EOS token ends the choice (the echoed prompt stops at its first <|im_end|>)', async () => {
  const r = await served.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi there' }] });
  assert.equal(r.choices[0].message.content, 'user\nHi there');
  assert.equal(r.choices[0].finish_reason, 'stop');
  const upToEos = tok.encode('<|im_start|>user\nHi there<|im_end|>', false).length;
  assert.equal(r.usage!.completion_tokens, upToEos, 'tokens through the EOS count, none after it');
});

test('max_tokens ends the choice with finish_reason length', async () => {
  const r = await served.client.chat.completions.create({ ...raw('one two three four five six seven'), max_tokens: 3 } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.equal(r.usage!.completion_tokens, 3);
  assert.equal(r.choices[0].message.content, 'one two three');
});

test('stream_options.include_usage sends a final usage chunk with no choices', async () => {
  const stream = await served.client.chat.completions.create({ ...raw('count me'), stream: true, stream_options: { include_usage: true } } as OpenAI.ChatCompletionCreateParamsStreaming);
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  const last = chunks.at(-1)!;
  assert.deepEqual(last.choices, []);
  assert.ok(last.usage);
  assert.equal(last.usage.total_tokens, last.usage.prompt_tokens + last.usage.completion_tokens);
  assert.equal(last.usage.completion_tokens, last.usage.prompt_tokens);
  assert.ok(chunks.slice(0, -1).every((c) => !c.usage));
});

test('the SSE body ends with data: [DONE]', async () => {
  const res = await fetch(`${served.server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...raw('abc'), stream: true }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  const body = await res.text();
  assert.ok(body.endsWith('data: [DONE]\n\n'), body.slice(-80));
  const first = JSON.parse(body.split('\n\n')[0].slice(6));
  assert.deepEqual(first.choices[0].delta, { role: 'assistant', content: '' });
});

test('requests alternate between the two mock workers and all succeed', async () => {
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => served.client.chat.completions.create(raw(`request ${i}`) as OpenAI.ChatCompletionCreateParamsNonStreaming)));
  results.forEach((r, i) => assert.equal(r.choices[0].message.content, `request ${i}`));
});

test('GET /v1/models lists the served model', async () => {
  const list = await served.client.models.list();
  const ids = list.data.map((m) => m.id);
  assert.deepEqual(ids, [MODEL]);
  assert.equal(list.data[0].object, 'model');
});

test('GET /health is 200 once workers are ready, and /live is 200', async () => {
  const h = await fetch(`${served.server.url}/health`);
  assert.equal(h.status, 200);
  const body = (await h.json()) as { status: string; models: { healthy_workers: number }[] };
  assert.equal(body.status, 'healthy');
  assert.equal(body.models[0].healthy_workers, 2);
  const l = await fetch(`${served.server.url}/live`);
  assert.equal(l.status, 200);
});

test('x-request-id is echoed back, or one is made', async () => {
  const a = await fetch(`${served.server.url}/v1/models`, { headers: { 'x-request-id': 'my-req-42' } });
  assert.equal(a.headers.get('x-request-id'), 'my-req-42');
  const b = await fetch(`${served.server.url}/v1/models`);
  assert.match(b.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

test('n choices come back with their own indexes (non-streaming and streaming)', async () => {
  const r = await served.client.chat.completions.create({ ...raw('same text'), n: 3, temperature: 0.8 } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.deepEqual(r.choices.map((c) => c.index), [0, 1, 2]);
  for (const c of r.choices) assert.equal(c.message.content, 'same text');
  assert.equal(r.usage!.completion_tokens, 3 * r.usage!.prompt_tokens);

  const stream = await served.client.chat.completions.create({ ...raw('streamed'), n: 2, temperature: 0.8, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
  const texts = ['', ''];
  const finishes: (string | null)[] = [null, null];
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      texts[c.index] += c.delta.content ?? '';
      if (c.finish_reason) finishes[c.index] = c.finish_reason;
    }
  }
  assert.deepEqual(texts, ['streamed', 'streamed']);
  assert.deepEqual(finishes, ['stop', 'stop']);
});

test('chat_template_args reach the template (Qwen3 enable_thinking: false)', async () => {
  for (const field of ['chat_template_args', 'chat_template_kwargs']) {
    const r = await served.client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hi' }],
      skip_special_tokens: false,
      ignore_eos: true,
      [field]: { enable_thinking: false },
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    assert.equal(r.choices[0].message.content, '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
  }
});

test('tools reach the template, with tool_choice auto and none', async () => {
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  for (const tool_choice of ['auto', 'none'] as const) {
    const r = await served.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice });
    assert.ok(r.choices[0].message.content!.includes('"name": "get_weather"'), 'the tool is in the rendered prompt');
  }
});
