// Custom chat processors (spec 002) through a real `portico serve` and real clients (the
// openai and @anthropic-ai/sdk npm packages, and fetch where headers are the point): a
// processor named by module path, its config, the card and routed engine it gets, the three
// endpoints it serves (completions staying native), every error mapping, every
// setResponseHeader rule (unary, streaming with and without a pre-commit peek, Responses
// and Messages), worker errors through the routed engine (an out-of-process mock engine
// with --faults), and after each bad request a good one. The processor is
// test/fixtures/processors/rules.mjs: the last user message picks what it does.

import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startPortico, QWEN3, ROOT, type Proc } from './helpers/portico.js';
import { resolve } from 'node:path';

const RULES = `${ROOT}test/fixtures/processors/rules.mjs:provider`;

let engine: Proc;
let server: Proc;
let peeking: Proc;
let openai: OpenAI;
let anthropic: Anthropic;

before(async () => {
  engine = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--faults']);
  const worker = `grpc://127.0.0.1:${engine.port}`;
  const common = ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', worker, '--worker-breaker-failures', '0', '--worker-breaker-failure-rate', '0', '--chat-processor', RULES];
  server = await startPortico([...common, '--chat-processor-config', '{"answer":42,"nested":{"k":[1,2]}}']);
  // The same, with the pre-commit peek configured by its Portico-style environment name.
  peeking = await startPortico(common, { PORTICO_HTTP_PRE_COMMIT_ERROR_PEEK_MS: '30000' });
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'x', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: server.url, apiKey: 'x', maxRetries: 0 });
});

after(async () => {
  await server?.stop();
  await peeking?.stop();
  await engine?.stop();
});

async function say(text: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: text }], ...extra });
  return r.choices[0]!.message.content ?? '';
}

/** A raw chat request (headers matter), unary or streamed. */
async function chat(base: string, text: string, stream = false): Promise<{ status: number; headers: Headers; body: string }> {
  const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: text }], stream }) });
  return { status: r.status, headers: r.headers, body: await r.text() };
}

/** The content of a streamed chat body (its SSE chunks concatenated). */
function streamedContent(body: string): string {
  let out = '';
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const v = JSON.parse(line.slice(6)) as { choices?: { delta?: { content?: string } }[] };
    out += v.choices?.[0]?.delta?.content ?? '';
  }
  return out;
}

async function stillServing(): Promise<void> {
  const r = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 4 });
  assert.ok((r.choices[0]!.message.content ?? '').length > 0, 'the pass-through answer has text');
}

describe('the processor and what it is given', () => {
  test('a module-path processor gets the frontend config, its options, the model card and the request', async () => {
    const v = JSON.parse(await say('card', { temperature: 0.5 })) as Record<string, any>;
    assert.deepEqual(v.options, { answer: 42, nested: { k: [1, 2] } });
    assert.equal(v.config['chat-processor'], RULES);
    assert.equal(v.config['model-name'], 'm');
    assert.equal(v.name, 'm');
    assert.equal(v.localDir, resolve(QWEN3));
    assert.equal(v.instanceId, 0, 'the worker that registered');
    assert.equal(v.built, 1, 'the factory ran once');
    assert.equal(typeof v.runtime.maxContextLength, 'number');
    assert.ok(v.runtime.vocabSize > 0);
    assert.equal(v.endpoint, '/v1/chat/completions');
    assert.equal(v.request.temperature, 0.5, 'the request as the client sent it');
  });

  test('a pass-through generation goes through the router to the worker, unary and streamed', async () => {
    const unary = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 5 });
    assert.ok(unary.choices[0]!.message.content!.length > 0);
    assert.equal(unary.choices[0]!.finish_reason, 'length');
    assert.equal(unary.object, 'chat.completion');
    const stream = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 5, stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text, unary.choices[0]!.message.content, 'the same tokens either way (echo engine)');
    assert.equal(finish, 'length');
  });

  test('/v1/completions keeps the native path', async () => {
    const r = await openai.completions.create({ model: 'm', prompt: 'card', max_tokens: 8 });
    assert.equal(r.choices[0]!.text, 'card', 'the echo engine, not the processor');
  });
});

describe('the Responses and Anthropic shapes of processor chunks', () => {
  test('/v1/responses: reasoning, text and a function call, unary and streamed', async () => {
    const r = await openai.responses.create({ model: 'm', input: 'shapes' });
    const types = r.output.map((o) => o.type);
    assert.deepEqual(types, ['reasoning', 'message', 'function_call']);
    assert.equal(r.output_text, 'Checking the weather.');
    const call = r.output[2] as { name: string; arguments: string; call_id: string };
    assert.equal(call.name, 'get_weather');
    assert.equal(call.call_id, 'call_rules1');
    assert.deepEqual(JSON.parse(call.arguments), { city: 'Paris' });
    assert.equal(r.usage?.input_tokens, 7);
    assert.equal(r.usage?.output_tokens, 5);

    const stream = await openai.responses.create({ model: 'm', input: 'shapes', stream: true });
    let done: any = null;
    let deltas = '';
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') deltas += ev.delta;
      if (ev.type === 'response.completed') done = ev.response;
    }
    assert.equal(deltas, 'Checking the weather.');
    assert.deepEqual(done.output.map((o: { type: string }) => o.type), ['reasoning', 'message', 'function_call']);
  });

  test('/v1/responses: the processor gets a chat request made of it', async () => {
    const r = await openai.responses.create({ model: 'm', input: 'card', instructions: 'be brief', max_output_tokens: 33 });
    const v = JSON.parse(r.output_text) as { endpoint: string; request: { messages: { role: string; content: string }[]; max_tokens: number } };
    assert.equal(v.endpoint, '/v1/responses');
    assert.equal(v.request.max_tokens, 33);
    assert.deepEqual(v.request.messages.map((m) => m.role), ['system', 'user']);
  });

  test('/v1/messages: thinking, text and tool_use, unary and streamed', async () => {
    const m = await anthropic.messages.create({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'shapes' }] });
    assert.deepEqual(m.content.map((b) => b.type), ['thinking', 'text', 'tool_use']);
    assert.equal(m.stop_reason, 'tool_use');
    const tool = m.content[2] as { name: string; input: unknown; id: string };
    assert.equal(tool.name, 'get_weather');
    assert.deepEqual(tool.input, { city: 'Paris' });
    assert.equal(m.usage.input_tokens, 7);
    assert.equal(m.usage.output_tokens, 5);

    const final = await anthropic.messages.stream({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'shapes' }] }).finalMessage();
    assert.deepEqual(final.content.map((b) => b.type), ['thinking', 'text', 'tool_use']);
    assert.deepEqual((final.content[2] as { input: unknown }).input, { city: 'Paris' });
    assert.equal(final.stop_reason, 'tool_use');
  });

  test('/v1/messages: a pass-through generation', async () => {
    const m = await anthropic.messages.create({ model: 'm', max_tokens: 4, messages: [{ role: 'user', content: 'hello there' }] });
    assert.equal(m.content[0]!.type, 'text');
    assert.ok((m.content[0] as { text: string }).text.length > 0);
    assert.equal(m.stop_reason, 'max_tokens');
  });
});

describe('errors the processor raises', () => {
  test('InvalidArgument is a 400 showing its message (chat, Responses, Messages)', async () => {
    await assert.rejects(say('raise:invalid'), (e: any) => e instanceof OpenAI.BadRequestError && e.status === 400 && /refused by the processor/.test(e.message));
    await assert.rejects(openai.responses.create({ model: 'm', input: 'raise:invalid' }), (e: any) => e.status === 400 && /refused by the processor/.test(e.message));
    await assert.rejects(
      anthropic.messages.create({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'raise:invalid' }] }),
      (e: any) => e instanceof Anthropic.BadRequestError && e.status === 400 && /refused by the processor/.test(e.message) && (e as { error?: { error?: { type?: string } } }).error?.error?.type === 'invalid_request_error',
    );
    await stillServing();
  });

  for (const [code, status, text] of [
    [404, 404, 'Not Found'],
    [418, 418, "I'm a Teapot"],
    [429, 429, 'Too Many Requests'],
    [503, 503, 'Service Unavailable'],
    [529, 529, 'Site Overloaded'],
    [502, 500, 'Internal Server Error'],
    [504, 500, 'Internal Server Error'],
    [200, 500, 'Internal Server Error'],
    [700, 500, 'Internal Server Error'],
  ] as const) {
    test(`HttpError(${code}) answers ${status} with the standard text, the message only logged`, async () => {
      const r = await chat(server.url, `raise:http:${code}`);
      assert.equal(r.status, status);
      const body = JSON.parse(r.body) as { error: { message: string } };
      assert.equal(body.error.message, text);
      assert.doesNotMatch(r.body, /secret/);
      if (status === 503 || status === 529) assert.ok(r.headers.get('retry-after'), 'an overload answer says when to retry');
      await stillServing();
    });
  }

  test('HttpError(401) answers 401 with WWW-Authenticate, as every 401 the server writes (one error writer)', async () => {
    const r = await chat(server.url, 'raise:http:401');
    assert.equal(r.status, 401);
    assert.equal(r.headers.get('www-authenticate'), 'Bearer');
    assert.equal((JSON.parse(r.body) as { error: { message: string } }).error.message, 'Unauthorized');
    assert.doesNotMatch(r.body, /secret/);
    await stillServing();
  });

  test('any other error is a 500 that does not show its message', async () => {
    const r = await chat(server.url, 'raise:plain');
    assert.equal(r.status, 500);
    assert.doesNotMatch(r.body, /secret/);
    assert.match(server.output(), /secret plain detail/, 'logged');
    await stillServing();
  });

  test('a chunk that is not a chunk is a 500 (unary) or an error event (stream), and logged', async () => {
    const unary = await chat(server.url, 'malformed');
    assert.equal(unary.status, 500);
    assert.equal(JSON.parse(unary.body).error.message, 'Internal Server Error');
    const streamed = await chat(server.url, 'malformed', true);
    assert.equal(streamed.status, 200);
    assert.match(streamed.body, /event: error\ndata: .*Internal Server Error/);
    assert.match(server.output(), /malformed chunk: a string/);
    await stillServing();
  });

  test('an error after a stream started is its final error event', async () => {
    const r = await chat(server.url, 'raise:late', true);
    assert.equal(r.status, 200);
    assert.match(r.body, /partial/);
    assert.match(r.body, /event: error\ndata: .*refused mid-stream/);
    assert.match(r.body, /data: \[DONE\]/);
    await stillServing();
  });

  test('a streaming error before the first chunk: the status with a peek, an error event without', async () => {
    const withPeek = await chat(peeking.url, 'raise:invalid', true);
    assert.equal(withPeek.status, 400);
    assert.match(JSON.parse(withPeek.body).error.message, /refused by the processor/);
    const without = await chat(server.url, 'raise:invalid', true);
    assert.equal(without.status, 200);
    assert.match(without.body, /event: error\ndata: .*refused by the processor/);
  });
});

describe('worker errors through the routed engine', () => {
  for (const [kind, status, re] of [
    ['invalid_argument', 400, /the engine rejected the request/],
    ['unavailable', 503, /unavailable/],
    ['resource_exhausted', 503, /out of capacity/],
    ['internal', 502, /engine failed/],
    ['deadline_exceeded', 504, /did not answer in time/],
  ] as const) {
    test(`a worker's ${kind}, escaping the processor, is the worker's status ${status}`, async () => {
      const r = await chat(server.url, `fault:${kind}`);
      assert.equal(r.status, status);
      assert.match(JSON.parse(r.body).error.message, re);
      assert.doesNotMatch(r.body, new RegExp(String(engine.port)), 'no worker address');
      await stillServing();
    });
  }

  test('the processor receives InvalidArgument for a rejected request, RoutedEngineError (with its status) otherwise', async () => {
    assert.match(await say('catch-fault:invalid_argument'), /^InvalidArgument 400: the engine rejected the request/);
    assert.match(await say('catch-fault:unavailable'), /^RoutedEngineError 503: /);
    assert.match(await say('catch-fault:internal'), /^RoutedEngineError 502: /);
    await stillServing();
  });
});

describe('setResponseHeader', () => {
  test('a unary chat answer carries the header', async () => {
    const r = await chat(server.url, 'header:x-proc=yes');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-proc'), 'yes');
    assert.equal(JSON.parse(r.body).choices[0].message.content, 'set=true');
  });

  test('an error response carries it too', async () => {
    const r = await chat(server.url, 'header-then-invalid:x-proc=on-error');
    assert.equal(r.status, 400);
    assert.equal(r.headers.get('x-proc'), 'on-error');
    assert.match(JSON.parse(r.body).error.message, /refused after a header/);
  });

  test('a stream without a configured peek: false, nothing set', async () => {
    const r = await chat(server.url, 'header:x-proc=yes', true);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-proc'), null);
    assert.equal(streamedContent(r.body), 'set=false');
  });

  test('a stream with the peek (PORTICO_HTTP_PRE_COMMIT_ERROR_PEEK_MS): set before the first chunk, false after it', async () => {
    const r = await chat(peeking.url, 'header:x-proc=streamed', true);
    assert.equal(r.headers.get('x-proc'), 'streamed');
    assert.equal(streamedContent(r.body), 'set=true');
    const late = await chat(peeking.url, 'header-after-yield:x-late=1', true);
    assert.equal(late.headers.get('x-late'), null);
    assert.equal(streamedContent(late.body), 'first set=false');
    const err = await chat(peeking.url, 'header-then-invalid:x-proc=err', true);
    assert.equal(err.status, 400);
    assert.equal(err.headers.get('x-proc'), 'err');
  });

  test('/v1/responses and /v1/messages: always false, nothing set', async () => {
    for (const base of [server.url, peeking.url]) {
      for (const stream of [false, true]) {
        const rr = await fetch(`${base}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'header:x-proc=yes', stream }) });
        assert.equal(rr.headers.get('x-proc'), null);
        assert.match(await rr.text(), /set=false/);
        const mr = await fetch(`${base}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'header:x-proc=yes' }], stream }) });
        assert.equal(mr.headers.get('x-proc'), null);
        assert.match(await mr.text(), /set=false/);
      }
    }
  });

  for (const [what, arg, re] of [
    ['an invalid name', 'bad name=1', /invalid header name/],
    ['an invalid value', 'x-ok=bad\u0001value', /invalid value/],
    ['content-type', 'Content-Type=text/plain', /content-type header is set by Portico/],
    ['content-length', 'content-length=3', /content-length header/],
    ['content-encoding', 'content-encoding=gzip', /content-encoding header/],
    ['x-request-id', 'x-request-id=mine', /x-request-id header/],
    ['a hop-by-hop header (connection)', 'connection=close', /connection header/],
    ['a hop-by-hop header (transfer-encoding)', 'transfer-encoding=chunked', /transfer-encoding header/],
  ] as const) {
    test(`throws for ${what}`, async () => {
      const r = await chat(server.url, `bad-header:${arg}`);
      assert.equal(r.status, 200);
      assert.match(JSON.parse(r.body).choices[0].message.content, /^threw TypeError: /);
      assert.match(JSON.parse(r.body).choices[0].message.content, re);
    });
  }
});
