// Per-key rate limits on a real `portico serve`, through the clients users run: the
// `openai` and `@anthropic-ai/sdk` SDKs (whose retry logic reads the headers) and the
// KServe gRPC client. Each limit is shown refusing the request past it and no other:
// requests and tokens on a window long enough that nothing refills during the test (so
// the counts are exact), or short enough that the SDK's one retry, waiting what the 429's
// retry-after-ms says, is admitted; concurrent requests on streams held open. Limits are
// reloaded on SIGHUP, and one budget holds across --shards.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { Code, ConnectError } from '@connectrpc/connect';
import { QWEN3, ROOT, startPortico, type Proc } from './helpers/portico.js';
import { eventually } from './helpers/eventually.js';
import { processorReady } from './helpers/processor-ready.js';
import { grpcPortOf, inferRequest, int32, kserveClient, text } from './helpers/kserve.js';

const MODEL = 'm';
/** A window no test outlives: nothing refills while it runs, so remaining counts are exact. */
const LONG = 1_000_000;

function configFile(config: object): string {
  const file = `${mkdtempSync(`${tmpdir()}/portico-rate-`)}/config.json`;
  writeFileSync(file, JSON.stringify(config));
  return file;
}

async function serve(config: object, more: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Proc & { config: string }> {
  const file = configFile(config);
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '1', '--config', file, ...more], env);
  return Object.assign(s, { config: file });
}

function openai(url: string, apiKey: string, maxRetries = 0, fetch?: typeof globalThis.fetch): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries, fetch });
}

const ask = (c: OpenAI, max = 3) => c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hello there' }], max_tokens: max }).withResponse();

async function refused(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.RateLimitError>> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof OpenAI.RateLimitError, String(err));
    return err;
  }
  assert.fail('the request was admitted');
}

test('requests per minute, per key: the SDK sees x-ratelimit-* on each answer and a 429 past the limit; another key has its own budget', async (t) => {
  const s = await serve({ 'api-key': ['sk-a', 'sk-b'], 'rate-limits': [{ key: 'sk-a', 'requests-per-minute': 2 }, { key: '*', 'requests-per-minute': 3 }], 'rate-limit-window-secs': LONG });
  t.after(() => s.stop());
  const a = openai(s.url, 'sk-a');
  for (const left of ['1', '0']) {
    const { response } = await ask(a);
    assert.equal(response.headers.get('x-ratelimit-limit-requests'), '2');
    assert.equal(response.headers.get('x-ratelimit-remaining-requests'), left);
    assert.match(response.headers.get('x-ratelimit-reset-requests') ?? '', /^\d+h\d+m[\d.]+s$/);
    assert.equal(response.headers.get('x-ratelimit-limit-tokens'), null, 'no tokens limit: no tokens headers');
  }
  const err = await refused(ask(a));
  assert.equal(err.status, 429);
  assert.equal(err.code, 'rate_limit_exceeded');
  assert.match(err.message, /Rate limit reached for requests/);
  assert.equal(err.headers.get('x-ratelimit-remaining-requests'), '0');
  assert.match(err.headers.get('retry-after') ?? '', /^\d+$/);
  assert.ok(Number(err.headers.get('retry-after-ms')) > 0);
  // A streamed request is refused the same way, before any event is written.
  const streamed = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-a' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, stream: true }) });
  assert.equal(streamed.status, 429);
  assert.equal(streamed.headers.get('x-ratelimit-remaining-requests'), '0');
  assert.equal(((await streamed.json()) as { error: { code: string } }).error.code, 'rate_limit_exceeded');
  // sk-b has no entry of its own: the default's 3, in a budget of its own.
  const b = openai(s.url, 'sk-b');
  for (const left of ['2', '1', '0']) assert.equal((await ask(b)).response.headers.get('x-ratelimit-remaining-requests'), left);
  await refused(ask(b));
  // A key the server does not accept is still a 401, not a 429.
  await assert.rejects(ask(openai(s.url, 'sk-nobody')), (e: unknown) => e instanceof OpenAI.AuthenticationError);
});

test("the SDK's retry waits what retry-after-ms says, and is admitted", async (t) => {
  // One request per half second: the second is refused, and its retry comes after the refill.
  const s = await serve({ 'rate-limits': [{ key: '*', 'requests-per-minute': 1 }], 'rate-limit-window-secs': 0.5 });
  t.after(() => s.stop());
  const statuses: number[] = [];
  const recording: typeof fetch = async (input, init) => {
    const r = await fetch(input, init);
    statuses.push(r.status);
    return r;
  };
  const c = openai(s.url, 'anyone', 1, recording);
  await ask(c);
  // Refused once (one request per window), then admitted on the one retry the client has:
  // a retry-after-ms shorter than the refill would be refused again and fail the call.
  const { response } = await ask(c);
  assert.equal(response.status, 200);
  assert.deepEqual(statuses.slice(1), [429, 200]);
});

test('tokens per minute: prompt and output tokens are charged; a prompt past what is left is refused', async (t) => {
  const s = await serve({ 'rate-limits': [{ key: '*', 'tokens-per-minute': 120 }], 'rate-limit-window-secs': LONG });
  t.after(() => s.stop());
  const c = openai(s.url, 'k');
  const first = await ask(c, 5);
  const u1 = first.data.usage!;
  // The headers are written at admission: the prompt is charged, the output not yet.
  assert.equal(first.response.headers.get('x-ratelimit-limit-tokens'), '120');
  assert.equal(first.response.headers.get('x-ratelimit-remaining-tokens'), String(120 - u1.prompt_tokens));
  const second = await ask(c, 5);
  const u2 = second.data.usage!;
  assert.equal(second.response.headers.get('x-ratelimit-remaining-tokens'), String(120 - u1.total_tokens - u2.prompt_tokens), 'the first request was charged its output too');
  // Spend the rest, then a prompt no longer fits.
  let left = 120 - u1.total_tokens - u2.total_tokens;
  while (left >= u1.prompt_tokens) {
    const r = await ask(c, 5);
    left -= r.data.usage!.total_tokens;
  }
  const err = await refused(ask(c, 5));
  assert.match(err.message, /Rate limit reached for tokens/);
  assert.equal(err.headers.get('x-ratelimit-remaining-tokens'), String(Math.max(0, left)));
  // No request limit: no request headers.
  assert.equal(err.headers.get('x-ratelimit-limit-requests'), null);
});

test('output tokens are charged as they stream: a request admitted mid-stream sees them spent', async (t) => {
  const L = 100_000;
  const file = configFile({ 'rate-limits': [{ key: '*', 'tokens-per-minute': L }], 'rate-limit-window-secs': LONG });
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'sim', '--mock-workers', '1', '--config', file]);
  t.after(() => s.stop());
  const c = openai(s.url, 'k');
  const ac = new AbortController();
  const { data: stream, response } = await c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 600, stream: true, ignore_eos: true } as never, { signal: ac.signal }).withResponse();
  const p1 = L - Number(response.headers.get('x-ratelimit-remaining-tokens'));
  // Read some chunks: each carries at least one token the engine generated.
  const it = (stream as unknown as AsyncIterable<{ choices: { delta: { content?: string } }[] }>)[Symbol.asyncIterator]();
  let chunks = 0;
  while (chunks < 20) {
    const { value } = await it.next();
    if (value?.choices[0]?.delta.content) chunks++;
  }
  const second = await ask(c, 1);
  const p2 = second.data.usage!.prompt_tokens;
  const spentByStream = L - p1 - p2 - Number(second.response.headers.get('x-ratelimit-remaining-tokens'));
  assert.ok(spentByStream >= chunks, `the stream's ${chunks}+ tokens so far are charged (charged: ${spentByStream})`);
  ac.abort();
});

test('a prompt larger than the whole tokens limit is refused for good: x-should-retry false, and the SDK does not retry', async (t) => {
  const s = await serve({ 'rate-limits': [{ key: '*', 'tokens-per-minute': 5 }], 'rate-limit-window-secs': LONG });
  t.after(() => s.stop());
  const statuses: number[] = [];
  const c = openai(s.url, 'k', 2, async (input, init) => {
    const r = await fetch(input, init);
    statuses.push(r.status);
    return r;
  });
  const err = await refused(c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'a prompt of rather more than five tokens, surely' }], max_tokens: 1 }));
  assert.match(err.message, /Request too large/);
  assert.equal(err.headers.get('x-should-retry'), 'false');
  assert.deepEqual(statuses, [429]);
});

test('concurrent requests: streams in flight hold their places; the next is refused until one ends', async (t) => {
  const file = configFile({ 'rate-limits': [{ key: '*', 'concurrent-requests': 2 }] });
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'sim', '--mock-workers', '1', '--config', file]);
  t.after(() => s.stop());
  const c = openai(s.url, 'k');
  const aborts = [new AbortController(), new AbortController()];
  // Streams that run for seconds (600 tokens at the sim engine's 20 ms a step); each is open once its first chunk is read.
  const streams = await Promise.all(aborts.map((ac) => c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 600, stream: true, ignore_eos: true } as never, { signal: ac.signal })));
  for (const st of streams) await (st as unknown as AsyncIterable<unknown>)[Symbol.asyncIterator]().next();
  const err = await refused(ask(c, 1));
  assert.match(err.message, /as many requests in flight/);
  assert.equal(err.headers.get('retry-after'), '1');
  // One stream ends (the client leaves): its place is given back.
  aborts[0]!.abort();
  await eventually(async () => {
    try {
      await ask(c, 1);
      return true;
    } catch (e) {
      if (!(e instanceof OpenAI.RateLimitError)) throw e;
      return false;
    }
  }, 'a request is admitted once a stream ended');
  aborts[1]!.abort();
});

test('Anthropic /v1/messages: anthropic-ratelimit-* headers (RFC 3339 resets) and a 429 rate_limit_error the SDK reads', async (t) => {
  const s = await serve({ 'api-key': ['sk-ant'], 'rate-limits': [{ key: 'sk-ant', 'requests-per-minute': 1, 'tokens-per-minute': 1000 }], 'rate-limit-window-secs': LONG });
  t.after(() => s.stop());
  const c = new Anthropic({ baseURL: s.url, apiKey: 'sk-ant', maxRetries: 0 });
  const { response } = await c.messages.create({ model: MODEL, max_tokens: 3, messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
  assert.equal(response.headers.get('anthropic-ratelimit-requests-limit'), '1');
  assert.equal(response.headers.get('anthropic-ratelimit-requests-remaining'), '0');
  assert.match(response.headers.get('anthropic-ratelimit-requests-reset') ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(Date.parse(response.headers.get('anthropic-ratelimit-requests-reset')!) > Date.now());
  assert.equal(response.headers.get('anthropic-ratelimit-tokens-limit'), '1000');
  assert.ok(Number(response.headers.get('anthropic-ratelimit-tokens-remaining')) < 1000);
  assert.equal(response.headers.get('x-ratelimit-limit-requests'), null, 'no OpenAI headers on the Anthropic face');
  await assert.rejects(c.messages.create({ model: MODEL, max_tokens: 3, messages: [{ role: 'user', content: 'Hello' }] }), (err: unknown) => {
    assert.ok(err instanceof Anthropic.RateLimitError, String(err));
    assert.equal(err.status, 429);
    assert.equal((err.error as { error?: { type?: string } }).error?.type, 'rate_limit_error');
    assert.equal(err.headers?.get('anthropic-ratelimit-requests-remaining'), '0');
    assert.match(err.headers?.get('retry-after') ?? '', /^\d+$/);
    return true;
  });
});

test('KServe ModelInfer: the budget is the same per key; past it RESOURCE_EXHAUSTED with x-ratelimit-* metadata', async (t) => {
  const s = await serve({ 'api-key': ['sk-g'], 'rate-limits': [{ key: 'sk-g', 'requests-per-minute': 2 }], 'rate-limit-window-secs': LONG }, ['--grpc-port', '0']);
  t.after(() => s.stop());
  const client = kserveClient(await grpcPortOf(s), [(next) => (req) => {
    req.header.set('authorization', 'Bearer sk-g');
    return next(req);
  }]);
  const req = () => inferRequest(MODEL, [text('text_input', 'Hello there'), int32('max_tokens', 2)]);
  let seen: Headers | null = null;
  await client.modelInfer(req(), { onHeader: (h) => (seen = h) });
  assert.equal(seen!.get('x-ratelimit-limit-requests'), '2');
  assert.equal(seen!.get('x-ratelimit-remaining-requests'), '1');
  // One HTTP request with the same key draws on the same budget.
  const r = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-g' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }) });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-ratelimit-remaining-requests'), '0');
  await r.text();
  await assert.rejects(client.modelInfer(req()), (err: unknown) => {
    assert.ok(err instanceof ConnectError, String(err));
    assert.equal(err.code, Code.ResourceExhausted, err.rawMessage);
    assert.match(err.rawMessage, /Rate limit reached for requests/);
    assert.equal(err.metadata.get('x-ratelimit-remaining-requests'), '0');
    assert.ok(Number(err.metadata.get('retry-after-ms')) > 0);
    return true;
  });
});

test('KServe ModelStreamInfer: a request past the limit gets its error_message on the stream, which goes on', async (t) => {
  const s = await serve({ 'rate-limits': [{ key: '*', 'requests-per-minute': 1 }], 'rate-limit-window-secs': LONG }, ['--grpc-port', '0']);
  t.after(() => s.stop());
  const client = kserveClient(await grpcPortOf(s));
  async function* two() {
    yield inferRequest(MODEL, [text('text_input', 'Hello there'), int32('max_tokens', 2)], { id: 'first' });
    yield inferRequest(MODEL, [text('text_input', 'Hello there'), int32('max_tokens', 2)], { id: 'second' });
  }
  const errors = new Map<string, string>();
  for await (const r of client.modelStreamInfer(two())) errors.set(r.inferResponse!.id, (errors.get(r.inferResponse!.id) ?? '') + r.errorMessage);
  // The two run concurrently: one is admitted, the other refused, whichever came first.
  assert.deepEqual([...errors.values()].filter((e) => e === '').length, 1, JSON.stringify([...errors]));
  assert.deepEqual([...errors.values()].filter((e) => /Rate limit reached for requests/.test(e)).length, 1, JSON.stringify([...errors]));
});

test('embeddings: one request and every input token from the same budget; past it a 429', async (t) => {
  const s = await serve({ 'rate-limits': [{ key: '*', 'requests-per-minute': 1, 'tokens-per-minute': 1000 }], 'rate-limit-window-secs': LONG });
  t.after(() => s.stop());
  const c = openai(s.url, 'k');
  const { data, response } = await c.embeddings.create({ model: MODEL, input: ['The quick brown fox', 'jumps'] }).withResponse();
  assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '0');
  assert.equal(response.headers.get('x-ratelimit-remaining-tokens'), String(1000 - data.usage.prompt_tokens));
  const err = await refused(c.embeddings.create({ model: MODEL, input: 'again' }));
  assert.match(err.message, /Rate limit reached for requests/);
});

test("a custom chat processor's routed generations draw on the request's key: headers, then a 429 it passes on", async (t) => {
  const s = await serve({ 'rate-limits': [{ key: '*', 'requests-per-minute': 1, 'tokens-per-minute': 100000 }], 'rate-limit-window-secs': LONG }, ['--chat-processor', `${ROOT}test/fixtures/processors/rules.mjs:provider`]);
  t.after(() => s.stop());
  await processorReady(s.url, MODEL);
  const c = openai(s.url, 'k');
  // The rules processor passes an ordinary message through the routed engine.
  const { response } = await ask(c);
  assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '0');
  assert.ok(Number(response.headers.get('x-ratelimit-remaining-tokens')) < 100000);
  const err = await refused(ask(c));
  assert.match(err.message, /Rate limit reached for requests/);
});

test('no limits configured: no rate-limit headers', async (t) => {
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '1']);
  t.after(() => s.stop());
  const { response } = await ask(openai(s.url, 'k'));
  assert.equal(response.status, 200);
  for (const [name] of response.headers) assert.ok(!name.includes('ratelimit'), name);
});

test('SIGHUP reloads the limits: a raised limit admits at once, keeping what was spent; a bad file keeps the limits in force', async (t) => {
  const s = await serve({ 'rate-limits': [{ key: '*', 'requests-per-minute': 1 }], 'rate-limit-window-secs': LONG });
  t.after(() => s.stop());
  const c = openai(s.url, 'k');
  await ask(c);
  await refused(ask(c));
  writeFileSync(s.config, JSON.stringify({ 'rate-limits': [{ key: '*', 'requests-per-minute': 3 }], 'rate-limit-window-secs': LONG }));
  s.child.kill('SIGHUP');
  await eventually(() => /rate limits reloaded/.test(s.output()), 'the reload is logged');
  // Used 1 of 1, raised to 3: 2 left.
  assert.equal((await ask(c)).response.headers.get('x-ratelimit-remaining-requests'), '1');
  writeFileSync(s.config, JSON.stringify({ 'rate-limits': [{ key: '*', 'requests-per-minute': -5 }] }));
  s.child.kill('SIGHUP');
  await eventually(() => /rate limits not reloaded/.test(s.output()), 'the refused reload is logged');
  assert.match(s.output(), /"requests-per-minute" must be an integer/);
  assert.equal((await ask(c)).response.headers.get('x-ratelimit-limit-requests'), '3');
  await refused(ask(c));
});

test('with --shards 2 a key has one budget: of 12 requests on new connections, exactly the limit of 5 are admitted', async (t) => {
  const file = configFile({ 'rate-limits': [{ key: '*', 'requests-per-minute': 5 }], 'rate-limit-window-secs': LONG });
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '1', '--shards', '2', '--config', file], { PORTICO_SHARDS: '2' });
  t.after(() => s.stop());
  const statuses = await Promise.all(
    Array.from({ length: 12 }, async () => {
      // A connection per request, so the kernel spreads them over both shards.
      const r = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }) });
      await r.text();
      return r.status;
    }),
  );
  assert.equal(statuses.filter((x) => x === 200).length, 5, String(statuses));
  assert.equal(statuses.filter((x) => x === 429).length, 7, String(statuses));
  // And a reload reaches every shard: raised to 8, three more are admitted, wherever they land.
  writeFileSync(file, JSON.stringify({ 'rate-limits': [{ key: '*', 'requests-per-minute': 8 }], 'rate-limit-window-secs': LONG }));
  s.child.kill('SIGHUP');
  await eventually(() => /rate limits reloaded/.test(s.output()), 'the reload is logged');
  const after = await Promise.all(
    Array.from({ length: 6 }, async () => {
      const r = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }) });
      await r.text();
      return r.status;
    }),
  );
  assert.equal(after.filter((x) => x === 200).length, 3, String(after));
});
