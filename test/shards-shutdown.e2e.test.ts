// SIGTERM right after a burst of requests, with `--shards 2`: the shard threads end
// without uWS's App.close(), which, called while the burst's keep-alive connections are
// still open, aborts the whole process with std::bad_alloc (`terminate called after
// throwing ...`, exit by SIGABRT) in some runs. Each shard
// drains, says so, and its thread ends by itself once its last connection has closed
// (ending it earlier, with worker.terminate() or process.exit(), aborts the process:
// Node checks that a finished thread's event loop has no open handles).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';

const ARGS = ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--shards', '2', '--mock', 'sim', '--mock-workers', '1'];

function chat(url: string, body: object, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body }) });
}

test('SIGTERM after a burst with 2 shards: in-flight streams finish, exit 0, no abort', async (t) => {
  const s = await startPortico(ARGS, { PORTICO_SHARDS: '2' });
  t.after(() => s.stop());
  const exited = once(s.child, 'exit');

  // Streams that will still be generating at SIGTERM (300 tokens at 20 ms a step in the
  // sim engine), each on a connection of its own so both shards hold some.
  const streams = await Promise.all(
    Array.from({ length: 8 }, () => chat(s.url, { stream: true, max_tokens: 300, ignore_eos: true }, { connection: 'close' })),
  );
  for (const r of streams) assert.equal(r.status, 200);
  let ended = 0;
  const bodies = streams.map((r) => r.text().finally(() => ended++));

  // The burst: 64 concurrent short requests over fetch's keep-alive pool. Its
  // connections stay open and idle in both shards when SIGTERM arrives.
  const burst = await Promise.all(Array.from({ length: 64 }, () => chat(s.url, { max_tokens: 1, ignore_eos: true }).then(async (r) => ({ status: r.status, json: await r.json() }))));
  for (const r of burst) {
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.choices[0].finish_reason, 'length');
  }

  const inflight = streams.length - ended;
  s.child.kill('SIGTERM');
  assert.ok(inflight > 0, 'streams were in flight at SIGTERM');
  for (const text of await Promise.all(bodies)) {
    assert.match(text, /"finish_reason":"length"/, 'the in-flight stream ran to its end');
    assert.ok(text.endsWith('data: [DONE]\n\n'), `the in-flight stream completed: ${text.slice(-200)}`);
  }
  await exitOf(s, exited);
  assert.match(s.output(), /serving on 2 shards/);
});

/** A raw HTTP/1.1 keep-alive connection: send a request, read the reply, stay open. */
class RawConnection {
  private buf = '';
  readonly closed: Promise<void>;
  private constructor(private readonly sock: Socket) {
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => (this.buf += d));
    this.closed = once(sock, 'close').then(() => undefined);
  }
  static async open(port: number): Promise<RawConnection> {
    const sock = connect(port, '127.0.0.1');
    await once(sock, 'connect');
    return new RawConnection(sock);
  }
  /** One GET; resolves with the status line, the header block and the body once the whole reply is in. */
  async get(path: string): Promise<{ status: string; head: string; body: string }> {
    this.buf = '';
    this.sock.write(`GET ${path} HTTP/1.1\r\nhost: test\r\n\r\n`);
    for (;;) {
      const head = this.buf.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(this.buf);
      if (head >= 0 && length && this.buf.length >= head + 4 + Number(length[1])) {
        const status = this.buf.slice(0, this.buf.indexOf('\r\n'));
        return { status, head: this.buf.slice(0, head), body: this.buf.slice(head + 4, head + 4 + Number(length[1])) };
      }
      const more = await Promise.race([once(this.sock, 'data').then(() => true), this.closed.then(() => false)]);
      if (!more) throw new Error(`connection closed before the reply to GET ${path} was complete: ${JSON.stringify(this.buf)}`);
    }
  }
}

async function exitOf(s: Proc, exited: Promise<unknown[]>): Promise<void> {
  const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
  assert.doesNotMatch(s.output(), /bad_alloc|terminate called|uv_loop_close\(\) while having open handles/, 'no C++ abort');
  assert.equal(signal, null, `exited by a signal: ${s.output().slice(-2000)}`);
  assert.equal(code, 0, s.output().slice(-2000));
}

test('SIGTERM with idle keep-alive connections open on both shards: they are answered while draining, closed by the server, exit 0', async (t) => {
  const s = await startPortico(ARGS, { PORTICO_SHARDS: '2' });
  t.after(() => s.stop());
  const exited = once(s.child, 'exit');
  // Connections that stay open and idle: the kernel spreads them over both shards.
  const conns: RawConnection[] = [];
  const shards = new Set<number>();
  for (let i = 0; i < 40 && (shards.size < 2 || conns.length < 4); i++) {
    const c = await RawConnection.open(s.port);
    const r = await c.get('/health');
    assert.equal(r.status, 'HTTP/1.1 200 OK');
    shards.add(JSON.parse(r.body).shard);
    conns.push(c);
  }
  assert.deepEqual([...shards].sort(), [0, 1], 'idle connections on both shards');

  s.child.kill('SIGTERM');
  // An idle connection is still answered while its shard drains (503 shutting_down).
  let draining: { status: string; head: string; body: string } | null = null;
  for (let i = 0; i < 5000; i++) {
    draining = await conns[0]!.get('/health');
    if (JSON.parse(draining.body).status === 'shutting_down') break;
  }
  assert.equal(draining!.status, 'HTTP/1.1 503 Service Unavailable');
  assert.equal(JSON.parse(draining!.body).status, 'shutting_down');
  // ... and that response closes its connection, so a client that keeps reusing one cannot
  // hold a drained shard's thread open.
  assert.match(draining!.head, /\r\nconnection: close\r\n/i);
  await conns[0]!.closed;
  // The clients never close them: the server does (uWS's idle timeout), then the process exits.
  await Promise.all(conns.map((c) => c.closed));
  await exitOf(s, exited);
});
