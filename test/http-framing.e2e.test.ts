// Hostile and unusual HTTP/1.1 framing against a real `portico serve`, over raw sockets:
// every case gets its answer (400/413/417/501/505) or a clean close, never a crash, and a
// normal request on a new connection right after must succeed with the server process
// still alive. What uWS itself answers or cannot answer (99+ header lines, a chunk
// extension, pipelining behind a deferred response) is documented in docs/serving.md.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { rawExchange, type RawResult } from './helpers/raw-http.js';

const MAX_BODY = 100_000;
const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1', '--max-body-bytes', String(MAX_BODY)]);

const BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
const LEN = Buffer.byteLength(BODY);
const post = (headers: string, body = BODY) => `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}\r\n${body}`;
const chunked = (size: string) => `${size}\r\n${BODY}\r\n0\r\n\r\n`;

/** The server still serves: a normal chat on a new connection succeeds, and the process is alive. */
async function stillServing(): Promise<void> {
  const r = await fetch(`${served.server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  assert.equal(JSON.parse(text).object, 'chat.completion');
  assert.equal(served.server.child.exitCode, null, 'the server process is still running');
}

/** An error answer with the given status and code, on a connection the server then closes. */
function assertRefused(r: RawResult, status: number, code: string): void {
  assert.equal(r.responses.length, 1, r.raw);
  assert.equal(r.responses[0]!.status, status, r.raw);
  assert.equal(JSON.parse(r.responses[0]!.body).error.code, code);
}

/** No answer at all, and the connection closed (uWS rejects the framing itself). */
function assertClosedUnanswered(r: RawResult): void {
  assert.equal(r.closed, true);
  assert.equal(r.raw, '', 'nothing was written');
}

/** uWS's own error page (HTML, not Portico's JSON) with this status, then the connection closed. */
function assertUwsRefused(r: RawResult, status: number): void {
  assert.equal(r.responses.length, 1, r.raw);
  assert.equal(r.responses[0]!.status, status, r.raw);
  assert.match(r.raw, /<i>uWebSockets\/20 Server<\/i>$/, r.raw);
  assert.equal(r.closed, true);
}

test('Content-Length values that are not one decimal number are refused, never a crash', async () => {
  // uWS refuses these itself with its 400 page before a byte of the body is read (it calls
  // the handler first, but drops what the handler wrote with the connection).
  for (const v of ['abc', '-1', '1x', '2, 2', 'NaN', '1_0', '99999999999999999999999', '+5', '0x5', '1e1', `${LEN}.0`]) {
    const r = await rawExchange(served.server.port, post(`Content-Length: ${v}\r\n`), { untilClose: true });
    assertUwsRefused(r, 400);
    await stillServing();
  }
  // An empty value means no body to uWS: the body's bytes are then read as the next request
  // line, which uWS refuses with its 505 page and closes. Portico's own 400 was refused too.
  const r = await rawExchange(served.server.port, post('Content-Length: \r\n'), { untilClose: true });
  assertUwsRefused(r, 505);
  await stillServing();
});

test('differing duplicate Content-Length lines are refused (smuggling); identical ones are served', async () => {
  // uWS takes the first value. The larger first: uWS waits for more body, so Portico's 400
  // (it reads every line) is what the client gets.
  const r = await rawExchange(served.server.port, post(`Content-Length: ${LEN + 10}\r\nContent-Length: ${LEN}\r\n`), { untilClose: true });
  assertRefused(r, 400, 'invalid_content_length');
  assert.match(JSON.parse(r.responses[0]!.body).error.message, /conflicting Content-Length/);
  assert.equal(r.closed, true);
  await stillServing();

  // The smaller first: the rest of the body is read as a next request, which uWS refuses
  // (505) and closes with, dropping Portico's 400. Nothing is served either way.
  const smaller = await rawExchange(served.server.port, post(`Content-Length: ${LEN - 10}\r\nContent-Length: ${LEN}\r\n`), { untilClose: true });
  assertUwsRefused(smaller, 505);
  await stillServing();

  const same = await rawExchange(served.server.port, post(`Content-Length: ${LEN}\r\nContent-Length: ${LEN}\r\n`));
  assert.equal(same.responses[0]?.status, 200, same.raw);
  await stillServing();
});

test('Content-Length with Transfer-Encoding is refused (RFC 9112 §6.1), never served', async () => {
  // uWS answers 400 itself, before any handler runs.
  const r = await rawExchange(served.server.port, post(`Content-Length: ${LEN}\r\nTransfer-Encoding: chunked\r\n`, chunked(LEN.toString(16))), { untilClose: true });
  assertUwsRefused(r, 400);
  await stillServing();
});

test('a chunked body is read; other transfer codings get 501', async () => {
  const r = await rawExchange(served.server.port, post('Transfer-Encoding: chunked\r\n', chunked(LEN.toString(16))));
  assert.equal(r.responses[0]?.status, 200, r.raw);
  assert.equal(JSON.parse(r.responses[0]!.body).object, 'chat.completion');

  const gz = await rawExchange(served.server.port, post('Transfer-Encoding: gzip, chunked\r\n', chunked(LEN.toString(16))));
  assertRefused(gz, 501, 'unsupported_transfer_encoding');
  await stillServing();
});

test('a chunked body past --max-body-bytes gets a 413 the client can read', async () => {
  const big = 'x'.repeat(MAX_BODY + 1000);
  const r = await rawExchange(served.server.port, post('Transfer-Encoding: chunked\r\n', `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`));
  assertRefused(r, 413, 'payload_too_large');
  await stillServing();
});

test('a declared body past the limit: Node fetch reads the 413 while it is still sending', async () => {
  // 40x the limit: far more than the socket buffers hold, so a server that closed at once
  // would make fetch fail with EPIPE instead of returning the answer.
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(MAX_BODY * 40) }] });
  const r = await fetch(`${served.server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(r.status, 413);
  const err = (await r.json()).error;
  assert.equal(err.code, 'payload_too_large');
  assert.match(err.message, new RegExp(`limit of ${MAX_BODY} bytes`));
  await stillServing();
});

const python = spawnSync('python3', ['-c', 'import requests'], { stdio: 'ignore' }).status === 0;
test('a declared body past the limit: Python requests reads the 413', { skip: python ? false : 'python3 with requests is not installed' }, async () => {
  const script = `import requests,sys\nr=requests.post(sys.argv[1]+'/v1/chat/completions',json={'model':'m','messages':[{'role':'user','content':'x'*${MAX_BODY * 40}}]})\nprint(r.status_code, r.json()['error']['code'])`;
  const out = spawnSync('python3', ['-c', script, served.server.url], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(out.stdout.trim(), '413 payload_too_large', out.stderr);
  await stillServing();
});

test('Expect: 100-continue gets 100 Continue, then the answer; any other expectation gets 417', async () => {
  const r = await rawExchange(served.server.port, post(`Content-Length: ${LEN}\r\nExpect: 100-continue\r\n`, ''), {
    onInterim: (status, sock) => {
      if (status === 100) sock.write(BODY);
    },
  });
  assert.deepEqual(r.interim, [100]);
  assert.equal(r.responses[0]?.status, 200, r.raw);

  const bad = await rawExchange(served.server.port, post(`Content-Length: ${LEN}\r\nExpect: something-else\r\n`));
  assertRefused(bad, 417, 'expectation_failed');
  await stillServing();
});

test('pipelined requests: answered in order when the answers are immediate; closed cleanly behind a deferred one', async () => {
  const live = 'GET /live HTTP/1.1\r\nHost: x\r\n\r\n';
  const r = await rawExchange(served.server.port, live + live + live, { want: 3 });
  assert.deepEqual(
    r.responses.map((x) => x.status),
    [200, 200, 200],
  );

  // A generation is answered on a later tick; uWS closes a connection on which a
  // request arrives while the previous answer is pending (docs/serving.md). Clean: no byte
  // of a partial response, and the server goes on.
  const two = await rawExchange(served.server.port, post(`Content-Length: ${LEN}\r\n`) + post(`Content-Length: ${LEN}\r\n`), { want: 2 });
  if (two.responses.length === 2) for (const x of two.responses) assert.equal(x.status, 200);
  else assertClosedUnanswered(two);
  await stillServing();
});

test('a bad percent-encoding in a path parameter is a 400, not an exception', async () => {
  const r = await rawExchange(served.server.port, 'DELETE /admin/workers/%zz HTTP/1.1\r\nHost: x\r\n\r\n');
  assertRefused(r, 400, 'invalid_path');
  await stillServing();
});

test('what uWS refuses (no Host, HTTP/1.0, bare LF, a huge header) is answered by uWS at once; what it cannot parse (99+ header lines, a chunk extension) is closed; nobody else waits', async () => {
  const lines = (n: number) => `GET /live HTTP/1.1\r\nHost: x\r\n${Array.from({ length: n }, (_, i) => `X-H${i}: v\r\n`).join('')}\r\n`;
  const refused: [string, number][] = [
    ['GET /live HTTP/1.1\r\nX-Other: y\r\n\r\n', 400],
    ['GET /live HTTP/1.0\r\nHost: x\r\n\r\n', 505],
    ['GET /live HTTP/1.1\nHost: x\n\n', 505],
    [`GET /live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(500_000)}\r\n\r\n`, 431],
  ];
  for (const [bytes, status] of refused) assertUwsRefused(await rawExchange(served.server.port, bytes, { untilClose: true }), status);

  // All at once: uWS closes each after its idle timeout (10 s) with no answer; meanwhile
  // the server answers everyone else at once.
  const ext = post('Transfer-Encoding: chunked\r\n', `${LEN.toString(16)};a=b\r\n${BODY}\r\n0\r\n\r\n`);
  const pending = [lines(98), ext].map((bytes) => rawExchange(served.server.port, bytes));
  const fine = await rawExchange(served.server.port, lines(97));
  assert.equal(fine.responses[0]?.status, 200, 'the most header lines uWS takes (98, Host included) are served');
  await stillServing();
  for (const r of await Promise.all(pending)) assertClosedUnanswered(r);
  await stillServing();
});
