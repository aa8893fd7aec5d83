// How a stream's events reach the socket, seen from a raw HTTP/1.1 client that keeps each
// chunk of the chunked body apart (uWS writes one chunk per socket write of the stream):
// by default every event-loop turn with output is a write (an engine that makes a token
// every 40 ms gives a write per token); with --stream-write-interval-ms the events after the
// first are coalesced (here an interval longer than the whole stream: the first event goes
// out alone, the rest together with the end), and the client gets the same events.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';
import { rawExchange } from './helpers/raw-http.js';

const started: Proc[] = [];
after(async () => {
  for (const p of started.reverse()) await p.stop();
});

const TOKENS = 6;

async function setup(frontArgs: string[]): Promise<Proc> {
  // A token per sequence every 40 ms, no EOS: each stream runs to max_tokens.
  const e = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--mode', 'sim', '--step-ms', '40', '--eos-probability', '0']);
  started.push(e);
  const f = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', `grpc://127.0.0.1:${e.port}`, ...frontArgs]);
  started.push(f);
  return f;
}

/** One streamed chat over a raw socket: the payload of each chunk of the chunked body, in order. */
async function streamChunks(port: number): Promise<string[]> {
  const body = JSON.stringify({ model: 'm', stream: true, stream_options: { include_usage: true }, max_tokens: TOKENS, messages: [{ role: 'user', content: 'Count to ten.' }] });
  const req = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const { responses } = await rawExchange(port, req, { timeoutMs: 60_000 });
  const res = responses[0]!;
  assert.equal(res.status, 200);
  assert.ok(res.chunks, `a chunked body: ${JSON.stringify(res.headers)}`);
  return res.chunks;
}

/**
 * Every token arrived: the usage counts TOKENS, and each token made a content event, except
 * that the sim engine's random tokens may end inside a UTF-8 character, whose bytes are held
 * back and go out with the next token's (one event for two tokens).
 */
function allTokens(all: string): void {
  assert.match(all, new RegExp(`"completion_tokens":${TOKENS}\\b`), all);
  const n = contentEvents(all);
  assert.ok(n >= 1 && n <= TOKENS, `${n} content events for ${TOKENS} tokens: ${all}`);
}

/** The chunk.choices[0].delta.content events of a chunk's text. */
function contentEvents(text: string): number {
  return (text.match(/"delta":\{"content":/g) ?? []).length;
}

test('by default each turn with output is its own write: an engine that steps every 40 ms gives a write per token', async () => {
  const f = await setup([]);
  const chunks = await streamChunks(f.port);
  const all = chunks.join('');
  allTokens(all);
  assert.ok(all.endsWith('data: [DONE]\n\n'));
  const withContent = chunks.filter((c) => contentEvents(c) > 0).length;
  // Tokens 40 ms apart leave in separate turns; a stalled machine may merge a pair, never all.
  assert.ok(withContent >= 3, `writes with content: ${withContent} of ${TOKENS} tokens: ${JSON.stringify(chunks)}`);
});

test('--stream-write-interval-ms coalesces the events after the first: the first token leaves alone, the rest in one write', async () => {
  const f = await setup(['--stream-write-interval-ms', '60000']);
  const chunks = await streamChunks(f.port);
  const all = chunks.join('');
  allTokens(all);
  assert.match(all, /"finish_reason":"length"/);
  assert.ok(all.endsWith('data: [DONE]\n\n'));
  const withContent = chunks.filter((c) => contentEvents(c) > 0);
  assert.equal(withContent.length, 2, `two writes carry content: ${JSON.stringify(chunks)}`);
  // The first token was not held for the interval (nor for the end): it went out in the turn it came.
  assert.ok(!/"finish_reason":"length"/.test(withContent[0]!), `the first write holds no finish: ${withContent[0]}`);
  assert.ok(contentEvents(withContent[0]!) < TOKENS);
  assert.ok(/"finish_reason":"length"/.test(withContent[1]!) && withContent[1]!.includes('data: [DONE]'), 'the rest went out with the end');
});
