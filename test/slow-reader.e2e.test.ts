// A slow reader does not grow the server's memory without bound: a raw TCP client
// asks for a long stream and stops reading; the server must pause that stream (backpressure)
// and hold at most about one event for it, then deliver the whole stream, correctly, once
// the client reads again. Observed through /metrics (stream_buffered_bytes and
// stream_backpressure_pauses_total), not through timing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';


const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1']);

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${served.server.url}/metrics`)).text();
  const m = new RegExp(`^${name}\\{model="m"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** Decode an HTTP/1.1 chunked body (the whole response has been read). */
function dechunk(raw: Buffer): string {
  const head = raw.indexOf('\r\n\r\n');
  assert.ok(head > 0, 'response has a header block');
  const headers = raw.subarray(0, head).toString('latin1');
  assert.match(headers, /^HTTP\/1\.1 200 /);
  assert.match(headers, /transfer-encoding: chunked/i);
  const parts: Buffer[] = [];
  let i = head + 4;
  for (;;) {
    const eol = raw.indexOf('\r\n', i);
    const size = parseInt(raw.subarray(i, eol).toString('latin1'), 16);
    assert.ok(Number.isFinite(size), `chunk size at byte ${i}`);
    if (size === 0) break;
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(parts).toString('utf8');
}

test('a slow reader pauses its stream, the server holds at most about one event, and the stream completes once it reads', async () => {
  // The echo engine streams the prompt back one token per event, for each of n choices:
  // 3 × 30k events of ~290 bytes (with continuous usage) is ~26 MB, well past what the
  // kernel buffers on loopback (~4 MB here). 30k tokens stay inside the 32k context.
  const words = 30_000;
  const n = 3;
  const body = JSON.stringify({
    model: 'm',
    messages: [{ role: 'user', content: 'hello '.repeat(words) }],
    n,
    stream: true,
    stream_options: { include_usage: true, continuous_usage_stats: true },
  });
  const pausesBefore = await metric('portico_frontend_stream_backpressure_pauses_total');
  const sock = net.connect(served.server.port, '127.0.0.1');
  await new Promise<void>((r) => sock.once('connect', () => r()));
  const chunks: Buffer[] = [];
  let ended = false;
  const done = new Promise<void>((r) =>
    sock.on('end', () => {
      ended = true;
      r();
    }),
  );
  sock.on('data', (d: Buffer) => {
    chunks.push(d);
    // Read the first bytes, then stop reading: the kernel buffers fill, then uWS's.
    if (chunks.length === 1) sock.pause();
  });
  sock.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);

  // Wait (bounded, not timed) until the server reports this stream paused on backpressure.
  let held = 0;
  for (let i = 0; i < 600 && held === 0; i++) {
    held = await metric('portico_frontend_stream_buffered_bytes');
    if (held === 0) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(held > 0, 'the stream was paused by backpressure while the client did not read');
  // While the client still does not read, what the server holds for it stays at about one
  // event (bounded), however much the engine could still send.
  for (let i = 0; i < 20; i++) {
    const now = await metric('portico_frontend_stream_buffered_bytes');
    assert.ok(now <= 16 * 1024, `server holds ${now} bytes for a paused stream`);
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(ended, false, 'the response is not over while the client is not reading');

  // The reader speeds up: the whole stream arrives, in order, complete.
  sock.resume();
  await done;
  const sse = dechunk(Buffer.concat(chunks));
  const events = sse.split('\n\n').filter((e) => e.length > 0);
  assert.equal(events[events.length - 1], 'data: [DONE]');
  const text = Array.from({ length: n }, () => '');
  const finish: (string | null)[] = Array.from({ length: n }, () => null);
  let usage: { prompt_tokens: number; completion_tokens: number } | null = null;
  for (const e of events.slice(0, -1)) {
    assert.ok(e.startsWith('data: '), `an SSE data event: ${e.slice(0, 80)}`);
    const chunk = JSON.parse(e.slice(6)) as { choices: { index: number; delta: { content?: string }; finish_reason: string | null }[]; usage?: { prompt_tokens: number; completion_tokens: number } };
    for (const c of chunk.choices) {
      text[c.index] += c.delta.content ?? '';
      finish[c.index] = c.finish_reason ?? finish[c.index];
    }
    if (chunk.usage && chunk.choices.length === 0) usage = chunk.usage;
  }
  // The echo engine returns the whole templated prompt (special tokens skipped), per choice.
  for (let i = 0; i < n; i++) {
    assert.equal(text[i].split('hello').length - 1, words, `choice ${i} is complete`);
    assert.equal(finish[i], 'stop');
  }
  assert.ok(usage, 'the closing usage chunk arrived');
  // Each choice ends at the prompt's <|im_end|> (EOS): every "hello" token counts.
  assert.ok(usage.completion_tokens >= n * words && usage.completion_tokens < n * usage.prompt_tokens, `completion_tokens ${usage.completion_tokens}`);

  assert.ok((await metric('portico_frontend_stream_backpressure_pauses_total')) > pausesBefore, 'the pauses were counted');
  assert.equal(await metric('portico_frontend_stream_buffered_bytes'), 0);
  assert.equal(await metric('portico_frontend_inflight_requests'), 0);
  // Still serving.
  const ok = await fetch(`${served.server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 }) });
  assert.equal(ok.status, 200);
});
