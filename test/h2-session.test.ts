// The engine client's HTTP/2 client (src/engine/h2/session.ts, client.ts) against real
// servers: node:http2 servers for what a conforming peer does (flow control, max concurrent
// streams, GOAWAY, RST_STREAM, PINGs, the HPACK dynamic table), and a raw `net` server that
// speaks just enough HTTP/2 for the frames node:http2 will not produce (GOAWAY below streams
// already sent, protocol errors, CONTINUATION, padding, an answer before the request body).
// Every wait is for an event (a frame read, a callback, a counter); the only sleeps are
// "at least this long" preconditions (a connection idle for longer than the PING interval),
// which a loaded machine only makes longer.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http2 from 'node:http2';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';

import { Code, ConnectError } from '@connectrpc/connect';

import { frameMessage, GRPC_REQUEST_HEADERS, openServerStream } from '../src/engine/grpc-h2.js';
import { H2Client, type H2ClientOptions } from '../src/engine/h2/client.js';
import * as F from '../src/engine/h2/frames.js';
import { HpackDecoder, HpackEncoder } from '../src/engine/h2/hpack.js';
import type { H2Stream, H2StreamHandler } from '../src/engine/h2/session.js';
import { eventually } from './helpers/eventually.js';

const T = { timeout: 30_000 };
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---- the client side: H2Client and a recording handler ----

function client(t: TestContext, url: string, over: Partial<H2ClientOptions> = {}): H2Client {
  const c = new H2Client(url, {
    connectTimeoutMs: 5000,
    pingIntervalMs: 60_000,
    pingTimeoutMs: 10_000,
    idleConnectionTimeoutMs: 60_000,
    headers: GRPC_REQUEST_HEADERS,
    ...over,
  });
  t.after(() => c.close(new ConnectError('test over', Code.Canceled)));
  return c;
}

interface Recording {
  headers: Array<{ fields: string[]; end: boolean }>;
  chunks: Buffer[];
  closes: number;
  err: ConnectError | undefined;
  /** Resolves with onClose's argument. */
  done: Promise<ConnectError | undefined>;
  body(): Buffer;
  handler: H2StreamHandler;
  stream?: H2Stream;
}

function record(hooks: Partial<H2StreamHandler> = {}): Recording {
  let resolve!: (e: ConnectError | undefined) => void;
  const r: Recording = {
    headers: [],
    chunks: [],
    closes: 0,
    err: undefined,
    done: new Promise((res) => (resolve = res)),
    body: () => Buffer.concat(r.chunks),
    handler: {
      onHeaders(fields, end) {
        r.headers.push({ fields, end });
        hooks.onHeaders?.(fields, end);
      },
      onTrailers(fields) {
        r.headers.push({ fields, end: true });
        hooks.onTrailers?.(fields);
      },
      onData(buf, start, end) {
        r.chunks.push(Buffer.from(buf.subarray(start, end)));
        hooks.onData?.(buf, start, end);
      },
      onClose(err) {
        r.closes++;
        r.err = err;
        resolve(err);
        hooks.onClose?.(err);
      },
    },
  };
  return r;
}

function send(c: H2Client, path: string, body: Buffer | readonly Buffer[] | string, hooks: Partial<H2StreamHandler> = {}): Recording {
  const r = record(hooks);
  r.stream = c.request(path, typeof body === 'string' ? Buffer.from(body) : body, r.handler);
  return r;
}

/** The stream ended without a transport error; returns its body. */
async function ok(r: Recording, what = 'stream'): Promise<Buffer> {
  const err = await r.done;
  assert.equal(err, undefined, `${what} failed: ${err?.message}`);
  assert.equal(r.closes, 1, `${what}: onClose once`);
  return r.body();
}

function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

// ---- node:http2 servers ----

interface NodeServer {
  url: string;
  port: number;
  sessions: http2.ServerHttp2Session[];
  /** Per session: the events it saw, in order ('stream', 'ping', 'goaway:<code>', 'close'). */
  log: Map<http2.Http2Session, string[]>;
  close(): Promise<void>;
}

async function nodeServer(
  t: TestContext,
  onStream: (st: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void,
  settings?: http2.Settings,
): Promise<NodeServer> {
  const srv = http2.createServer({ settings });
  const sessions: http2.ServerHttp2Session[] = [];
  const log = new Map<http2.Http2Session, string[]>();
  srv.on('session', (s) => {
    sessions.push(s);
    const l: string[] = [];
    log.set(s, l);
    s.on('error', () => undefined);
    s.on('ping', () => l.push('ping'));
    s.on('goaway', (code) => l.push(`goaway:${code}`));
    s.on('close', () => l.push('close'));
  });
  srv.on('stream', (st, headers) => {
    st.on('error', () => undefined);
    log.get(st.session!)?.push('stream');
    onStream(st, headers);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  const s: NodeServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    sessions,
    log,
    close: () => new Promise<void>((r) => {
      for (const ses of sessions) ses.destroy();
      srv.close(() => r());
    }),
  };
  t.after(() => s.close());
  return s;
}

/** Read a node:http2 server stream's whole request body. */
function readAll(st: http2.ServerHttp2Stream): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    st.on('data', (d: Buffer) => parts.push(d));
    st.on('end', () => resolve(Buffer.concat(parts)));
  });
}

// ---- a raw HTTP/2 server ----

interface Frame {
  type: number;
  flags: number;
  id: number;
  payload: Buffer;
}

interface RawRequest {
  fields: string[];
  body: Buffer;
  ended: boolean;
}

const GRPC_OK_HEADERS = [':status', '200', 'content-type', 'application/grpc'];

/** One connection of the raw server: the frames the client sent, and helpers to answer. */
class RawConn {
  readonly frames: Frame[] = [];
  readonly requests = new Map<number, RawRequest>();
  closed = false;
  /** Answer the client's PINGs (off: the server goes silent). */
  answerPings = true;
  /** Give back the connection window for every DATA byte read (not the streams'). */
  autoConnWindow = true;
  readonly enc = new HpackEncoder();
  private readonly dec = new HpackDecoder(4096, 1 << 20);
  private buf: Buffer = Buffer.alloc(0);
  private gotPreface = false;

  constructor(
    readonly socket: net.Socket,
    readonly index: number,
    settings: ReadonlyArray<readonly [number, number]>,
    private readonly hooks: RawHooks,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('close', () => (this.closed = true));
    socket.on('error', () => undefined);
    this.write(F.settingsFrame(settings));
  }

  write(...bufs: Buffer[]): void {
    if (!this.socket.destroyed) this.socket.write(bufs.length === 1 ? bufs[0]! : Buffer.concat(bufs));
  }

  headers(id: number, fields: string[], endStream = false): void {
    this.write(F.frame(F.HEADERS, F.FLAG_END_HEADERS | (endStream ? F.FLAG_END_STREAM : 0), id, this.enc.encode(fields)));
  }

  data(id: number, payload: Buffer | string, endStream = false): void {
    this.write(F.frame(F.DATA, endStream ? F.FLAG_END_STREAM : 0, id, typeof payload === 'string' ? Buffer.from(payload) : payload));
  }

  /** A gRPC-ish answer: headers, the request body back, trailers. */
  echo(id: number): void {
    this.headers(id, GRPC_OK_HEADERS);
    const body = this.requests.get(id)!.body;
    // (In frames of at most 16384: the client's SETTINGS_MAX_FRAME_SIZE; its windows are larger than our bodies.)
    for (let o = 0; o < body.length || o === 0; o += F.DEFAULT_MAX_FRAME) this.data(id, body.subarray(o, o + F.DEFAULT_MAX_FRAME));
    this.headers(id, ['grpc-status', '0'], true);
  }

  /** The client's GOAWAY frames' error codes. */
  goawayCodes(): number[] {
    return this.frames.filter((f) => f.type === F.GOAWAY).map((f) => f.payload.readUInt32BE(4));
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    if (!this.gotPreface) {
      if (this.buf.length < F.CLIENT_PREFACE.length) return;
      assert.ok(this.buf.subarray(0, F.CLIENT_PREFACE.length).equals(F.CLIENT_PREFACE), 'the client preface');
      this.buf = this.buf.subarray(F.CLIENT_PREFACE.length);
      this.gotPreface = true;
    }
    while (this.buf.length >= F.FRAME_HEADER) {
      const len = this.buf.readUIntBE(0, 3);
      if (this.buf.length < F.FRAME_HEADER + len) break;
      const f: Frame = {
        type: this.buf[3]!,
        flags: this.buf[4]!,
        id: this.buf.readUInt32BE(5) & F.MAX_WINDOW,
        payload: Buffer.from(this.buf.subarray(F.FRAME_HEADER, F.FRAME_HEADER + len)),
      };
      this.buf = this.buf.subarray(F.FRAME_HEADER + len);
      this.onFrame(f);
    }
  }

  private onFrame(f: Frame): void {
    this.frames.push(f);
    switch (f.type) {
      case F.SETTINGS:
        if (!(f.flags & F.FLAG_ACK)) this.write(F.frame(F.SETTINGS, F.FLAG_ACK, 0));
        break;
      case F.PING:
        if (!(f.flags & F.FLAG_ACK) && this.answerPings) this.write(F.pingFrame(f.payload, true));
        break;
      case F.HEADERS: {
        // Our client sends neither padding, priority nor CONTINUATION.
        assert.ok(f.flags & F.FLAG_END_HEADERS);
        const fields = this.dec.decode(f.payload, 0, f.payload.length);
        this.requests.set(f.id, { fields, body: Buffer.alloc(0), ended: (f.flags & F.FLAG_END_STREAM) !== 0 });
        break;
      }
      case F.DATA: {
        const r = this.requests.get(f.id);
        if (r) {
          r.body = Buffer.concat([r.body, f.payload]);
          if (f.flags & F.FLAG_END_STREAM) r.ended = true;
        }
        if (this.autoConnWindow && f.payload.length > 0) this.write(F.windowUpdateFrame(0, f.payload.length));
        break;
      }
    }
    this.hooks.onFrame?.(this, f);
    const r = this.requests.get(f.id);
    if (r && r.ended && (f.type === F.DATA || f.type === F.HEADERS) && f.flags & F.FLAG_END_STREAM) this.hooks.onRequest?.(this, f.id, r);
  }
}

interface RawHooks {
  onConnection?(c: RawConn): void;
  onFrame?(c: RawConn, f: Frame): void;
  /** A request's END_STREAM arrived (its headers and whole body are in `r`). */
  onRequest?(c: RawConn, id: number, r: RawRequest): void;
}

interface RawServer {
  url: string;
  conns: RawConn[];
  conn(i: number): Promise<RawConn>;
}

async function rawServer(t: TestContext, hooks: RawHooks, settings: ReadonlyArray<readonly [number, number]> = []): Promise<RawServer> {
  const conns: RawConn[] = [];
  const srv = net.createServer((sock) => {
    const c = new RawConn(sock, conns.length, settings, hooks);
    conns.push(c);
    hooks.onConnection?.(c);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => {
    for (const c of conns) c.socket.destroy();
    srv.close(() => r());
  }));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    conns,
    conn: async (i) => {
      await eventually(() => conns.length > i, `raw connection #${i}`);
      return conns[i]!;
    },
  };
}

/** Resolves with the first frame (already read or still to come) on `c` that `pred` accepts. */
async function frameOn(c: RawConn, pred: (f: Frame) => boolean, what: string): Promise<Frame> {
  let found: Frame | undefined;
  await eventually(() => (found = c.frames.find(pred)) !== undefined, what);
  return found!;
}

// ---- a TCP proxy whose connections can be frozen ----

interface Pair {
  down: net.Socket;
  up: net.Socket;
  /** Stop forwarding in both directions (what arrives is dropped). */
  frozen: boolean;
}

async function proxy(t: TestContext, port: number): Promise<{ url: string; pairs: Pair[] }> {
  const pairs: Pair[] = [];
  const srv = net.createServer((down) => {
    const up = net.connect(port, '127.0.0.1');
    const p: Pair = { down, up, frozen: false };
    pairs.push(p);
    down.on('data', (d) => {
      if (!p.frozen) up.write(d);
    });
    up.on('data', (d) => {
      if (!p.frozen) down.write(d);
    });
    for (const [a, b] of [[down, up], [up, down]] as const) {
      a.on('error', () => undefined);
      a.on('close', () => b.destroy());
    }
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => {
    for (const p of pairs) {
      p.down.destroy();
      p.up.destroy();
    }
    srv.close(() => r());
  }));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, pairs };
}

// ---- the tests ----

describe('HTTP/2 client: flow control and concurrency (node:http2 server)', () => {
  test('a 300 KB request body (past the 65535 window and 16384 frames) arrives intact; a 1 MB response streams back', T, async (t) => {
    const reqBody = randomBytes(300 * 1024);
    const resBody = randomBytes(1024 * 1024);
    let got: Buffer | undefined;
    const srv = await nodeServer(t, (st) => {
      void readAll(st).then((b) => {
        got = b;
        st.respond({ ':status': 200, 'content-type': 'application/octet-stream' });
        // Several writes, each larger than our stream window's half: the client acknowledges as it reads.
        for (let o = 0; o < resBody.length; o += 200_000) st.write(resBody.subarray(o, o + 200_000));
        st.end();
      });
    });
    const c = client(t, srv.url);
    const r = send(c, '/upload', reqBody);
    const body = await ok(r);
    assert.ok(got, 'the server read the request');
    assert.equal(got.length, reqBody.length);
    assert.equal(createHash('sha256').update(got).digest('hex'), createHash('sha256').update(reqBody).digest('hex'), 'request bytes intact');
    assert.equal(field(r.headers[0]!.fields, ':status'), '200');
    assert.equal(body.length, resBody.length);
    assert.ok(body.equals(resBody), 'response bytes intact');
    assert.equal(c.streamCount, 0);
  });

  test('flow control, exactly: two 150 KB bodies (one sent in parts, as an image request is) never pass the connection or stream windows the server grants, and resume on WINDOW_UPDATE', T, async (t) => {
    // (node:http2 reads a whole socket read before it accounts for it, so it does not catch a
    // client that overruns its windows; this server checks every DATA frame.) Default windows
    // (65535), given back in small steps only when used up: the client blocks on each.
    const CONN_STEP = 30_000;
    const STREAM_STEP = 25_000;
    let connAllowed = F.DEFAULT_WINDOW;
    let connGot = 0;
    const streamAllowed = new Map<number, number>();
    const streamGot = new Map<number, number>();
    const violations: string[] = [];
    let blocks = 0;
    const srv = await rawServer(t, {
      onConnection: (conn) => (conn.autoConnWindow = false),
      onFrame(conn, f) {
        if (f.type !== F.DATA) return;
        const len = f.payload.length;
        if (len > F.DEFAULT_MAX_FRAME) violations.push(`a ${len}-byte DATA frame`);
        connGot += len;
        const got = (streamGot.get(f.id) ?? 0) + len;
        streamGot.set(f.id, got);
        const allowed = streamAllowed.get(f.id) ?? F.DEFAULT_WINDOW;
        if (connGot > connAllowed) violations.push(`connection window: ${connGot} > ${connAllowed}`);
        if (got > allowed) violations.push(`stream ${f.id} window: ${got} > ${allowed}`);
        if (connGot === connAllowed) {
          blocks++;
          connAllowed += CONN_STEP;
          conn.write(F.windowUpdateFrame(0, CONN_STEP));
        }
        if (got === allowed && !(f.flags & F.FLAG_END_STREAM)) {
          blocks++;
          streamAllowed.set(f.id, allowed + STREAM_STEP);
          conn.write(F.windowUpdateFrame(f.id, STREAM_STEP));
        }
      },
      onRequest: (conn, id) => conn.echo(id),
    });
    const c = client(t, srv.url);
    const bodies = [randomBytes(150_000), randomBytes(150_000)];
    // The second in parts whose edges fall inside DATA frames and across window stops.
    const b1 = bodies[1]!;
    const rs = [send(c, '/fc', bodies[0]!), send(c, '/fc', [b1.subarray(0, 7), b1.subarray(7, 70_001), b1.subarray(70_001, 70_002), b1.subarray(70_002)])];
    const got = await Promise.all(rs.map((r, i) => ok(r, `request ${i}`)));
    assert.deepEqual(violations, []);
    got.forEach((g, i) => assert.ok(g.equals(bodies[i]!), `body ${i} intact`));
    assert.deepEqual([...srv.conns[0]!.requests.values()].map((r) => r.body.length), [150_000, 150_000]);
    assert.ok(blocks > 5, `the client waited for window updates (${blocks})`);
  });

  test('SETTINGS_INITIAL_WINDOW_SIZE lowered while a body waits: the stream window goes negative, nothing is sent until it is above zero, raising it resumes the body (RFC 9113 §6.9.2)', T, async (t) => {
    const BODY = 200_000;
    // Stream 1's send limit as the server granted it: the bytes it may have received in all.
    let allowed = F.DEFAULT_WINDOW;
    let got = 0;
    let acks = 0;
    const violations: string[] = [];
    const srv = await rawServer(t, {
      onFrame(_conn, f) {
        if (f.type === F.PING && f.flags & F.FLAG_ACK) acks++;
        if (f.type !== F.DATA || f.id !== 1) return;
        got += f.payload.length;
        if (got > allowed) violations.push(`${got} > ${allowed}`);
      },
      onRequest: (conn, id) => conn.echo(id),
    });
    const c = client(t, srv.url);
    const body = randomBytes(BODY);
    const r = send(c, '/w', body);
    const conn = await srv.conn(0);
    await eventually(() => got === F.DEFAULT_WINDOW, 'the first 65535 bytes (the default stream window)');
    // A PING after the frames under test: the client answers frames in order, so whatever
    // DATA they let it send is read before the ACK.
    const settled = async (n: number): Promise<void> => {
      conn.write(F.pingFrame(Buffer.alloc(8, n), false));
      await eventually(() => acks === n, `PING ACK ${n}`);
    };
    // 16384 from 65535: the window, 0 now, becomes -49151.
    allowed += 16_384 - F.DEFAULT_WINDOW;
    conn.write(F.settingsFrame([[F.SETTINGS_INITIAL_WINDOW_SIZE, 16_384]]));
    // Back to 0 only: still nothing to send.
    allowed += 49_151;
    conn.write(F.windowUpdateFrame(1, 49_151));
    await settled(1);
    assert.equal(got, F.DEFAULT_WINDOW, 'no DATA while the window was at or below zero');
    // 1000 above zero: exactly 1000 bytes.
    allowed += 1000;
    conn.write(F.windowUpdateFrame(1, 1000));
    await eventually(() => got === F.DEFAULT_WINDOW + 1000, 'the 1000 bytes the window allows');
    await settled(2);
    assert.equal(got, F.DEFAULT_WINDOW + 1000, 'no more than the window allows');
    // Raised to 200000: the window grows by 183616, past what is left of the body.
    allowed += 200_000 - 16_384;
    conn.write(F.settingsFrame([[F.SETTINGS_INITIAL_WINDOW_SIZE, 200_000]]));
    assert.ok((await ok(r)).equals(body), 'the body came back intact');
    assert.deepEqual(violations, []);
    assert.equal(got, BODY);
    assert.equal(conn.frames.filter((f) => f.type === F.SETTINGS && f.flags & F.FLAG_ACK).length, 3, 'the client acknowledged every SETTINGS');
    assert.equal(srv.conns.length, 1);
  });

  // Each case answers the first connection's request with settings that break the limit.
  const windowCases: Array<{ name: string; answer: (c: RawConn, id: number) => void }> = [
    { name: 'SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1', answer: (conn) => conn.write(F.settingsFrame([[F.SETTINGS_INITIAL_WINDOW_SIZE, 0x8000_0000]])) },
    { name: 'SETTINGS_INITIAL_WINDOW_SIZE raised past an open stream\'s window of 2^31-1', answer: (conn, id) => {
      conn.headers(id, GRPC_OK_HEADERS);
      // The stream's window: 65535 - 1 (the body sent) + this = 2^31-1 exactly (allowed) ...
      conn.write(F.windowUpdateFrame(id, F.MAX_WINDOW - (F.DEFAULT_WINDOW - 1)));
      // ... and one more through the initial window size: past the limit.
      conn.write(F.settingsFrame([[F.SETTINGS_INITIAL_WINDOW_SIZE, F.DEFAULT_WINDOW + 1]]));
    } },
  ];
  for (const k of windowCases) {
    test(`${k.name}: a FLOW_CONTROL_ERROR GOAWAY, the stream fails with Internal, the next request reconnects`, T, async (t) => {
      const srv = await rawServer(t, {
        onRequest(conn, id) {
          if (conn.index === 0) k.answer(conn, id);
          else conn.echo(id);
        },
      });
      const c = client(t, srv.url);
      const err = await send(c, '/w', 'x').done;
      assert.ok(err instanceof ConnectError);
      assert.equal(err.code, Code.Internal);
      const c0 = srv.conns[0]!;
      await frameOn(c0, (f) => f.type === F.GOAWAY, 'the client sent GOAWAY');
      assert.deepEqual(c0.goawayCodes(), [F.FLOW_CONTROL_ERROR]);
      assert.equal((await ok(send(c, '/w', 'again'), 'next')).toString(), 'again');
      assert.equal(srv.conns.length, 2);
    });
  }

  test('SETTINGS_MAX_CONCURRENT_STREAMS = 2: 12 concurrent requests all complete, never more than 2 open at the server', T, async (t) => {
    let open = 0;
    let maxOpen = 0;
    let accepted = 0;
    const srv = await nodeServer(t, (st) => {
      open++;
      accepted++;
      maxOpen = Math.max(maxOpen, open);
      st.on('close', () => open--);
      void readAll(st).then((b) => {
        // Answer a little later, so that streams overlap at the server.
        setImmediate(() => {
          st.respond({ ':status': 200 });
          st.end(Buffer.concat([Buffer.from('re:'), b]));
        });
      });
    }, { maxConcurrentStreams: 2 });
    const c = client(t, srv.url);
    const rs = Array.from({ length: 12 }, (_, i) => send(c, '/c', `req-${i}`));
    const bodies = await Promise.all(rs.map((r, i) => ok(r, `request ${i}`)));
    bodies.forEach((b, i) => assert.equal(b.toString(), `re:req-${i}`));
    assert.ok(maxOpen <= 2, `the server saw ${maxOpen} streams open at once`);
    assert.ok(maxOpen === 2, 'streams did run two at a time');
    // (Streams sent before the server's SETTINGS arrived may have been refused and sent again.)
    assert.equal(accepted, 12);
    assert.equal(srv.sessions.length, 1);
    assert.equal(c.connectionCount, 1);
    assert.equal(c.streamCount, 0);
  });
});

describe('HTTP/2 client: GOAWAY and RST_STREAM', () => {
  test('graceful GOAWAY while a stream is open: it completes; the next request opens a new connection', T, async (t) => {
    let first: http2.ServerHttp2Stream | undefined;
    const srv = await nodeServer(t, (st) => {
      if (!first) {
        first = st;
        // GOAWAY NO_ERROR naming this stream, then its response headers (on the wire after the GOAWAY).
        st.session!.goaway(http2.constants.NGHTTP2_NO_ERROR, st.id!);
        st.respond({ ':status': 200 });
        st.write('part1 ');
        return;
      }
      st.respond({ ':status': 200 });
      // The second stream done, the first one ends too.
      st.end('second', () => first!.end('part2'));
    });
    const c = client(t, srv.url);
    let second: Recording | undefined;
    // The first response's headers come after the GOAWAY: a request made then goes elsewhere.
    const r1 = send(c, '/a', 'one', { onHeaders: () => (second ??= send(c, '/b', 'two')) });
    assert.equal((await ok(r1, 'first')).toString(), 'part1 part2');
    assert.ok(second);
    assert.equal((await ok(second, 'second')).toString(), 'second');
    assert.equal(srv.sessions.length, 2, 'the second request went on a new connection');
    assert.deepEqual(srv.log.get(srv.sessions[1]!)!.filter((e) => e === 'stream'), ['stream']);
    // The client lets go of the first connection once its last stream ended. (node:http2
    // stops reading a session it sent GOAWAY on once its streams are done, so the server
    // side cannot tell.)
    await eventually(() => c.connectionCount === 1, 'the client closed the first connection');
  });

  test('GOAWAY below streams already sent: those are sent again on a new connection and succeed; the others are not', T, async (t) => {
    const srv = await rawServer(t, {
      onRequest(conn, id) {
        if (conn.index === 0) {
          if ([...conn.requests.values()].filter((r) => r.ended).length < 4) return;
          // Streams 1, 3, 5, 7 all read: process up to 3 only.
          conn.write(F.goawayFrame(3, F.NO_ERROR, 'going away'));
          conn.echo(1);
          conn.echo(3);
          return;
        }
        conn.echo(id);
      },
    });
    const c = client(t, srv.url);
    const bodies = ['body-0', 'body-1', 'body-2', 'body-3'];
    const rs = bodies.map((b) => send(c, '/g', b));
    const got = await Promise.all(rs.map((r, i) => ok(r, `request ${i}`)));
    assert.deepEqual(got.map(String), bodies, 'each request got its own body back');
    const c0 = srv.conns[0]!;
    const c1 = srv.conns[1]!;
    assert.deepEqual([...c0.requests.keys()], [1, 3, 5, 7]);
    assert.deepEqual([...c0.requests.values()].map((r) => r.body.toString()), bodies);
    assert.equal(srv.conns.length, 2);
    assert.deepEqual([...c1.requests.values()].map((r) => r.body.toString()).sort(), ['body-2', 'body-3'], 'only the unseen streams, with their bodies');
    // The first connection closes once streams 1 and 3 ended.
    await eventually(() => c0.closed, 'the first connection closed');
    assert.equal(c.connectionCount, 1);
    assert.equal(c.streamCount, 0);
  });

  test('RST_STREAM REFUSED_STREAM before any headers: the request is sent again (with its body) and succeeds', T, async (t) => {
    const seen: Buffer[] = [];
    let n = 0;
    const srv = await nodeServer(t, (st) => {
      if (n++ === 0) {
        st.close(http2.constants.NGHTTP2_REFUSED_STREAM);
        return;
      }
      void readAll(st).then((b) => {
        seen.push(b);
        st.respond({ ':status': 200 });
        st.end(Buffer.concat([Buffer.from('re:'), b]));
      });
    });
    const c = client(t, srv.url);
    const r = send(c, '/r', 'refuse me once');
    assert.equal((await ok(r)).toString(), 're:refuse me once');
    assert.equal(n, 2, 'sent twice');
    assert.deepEqual(seen.map(String), ['refuse me once'], 'the second time with its body');
    assert.equal(srv.sessions.length, 1);
  });

  test('RST_STREAM INTERNAL_ERROR fails the call with Aborted naming the HTTP/2 error code; not sent again', T, async (t) => {
    let n = 0;
    const srv = await nodeServer(t, (st) => {
      n++;
      if (st.id === 1) {
        st.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
        return;
      }
      st.respond({ ':status': 200 });
      st.end('fine');
    });
    const c = client(t, srv.url);
    const r = send(c, '/r', 'x');
    const err = await r.done;
    assert.ok(err instanceof ConnectError);
    assert.equal(err.code, Code.Aborted);
    assert.match(err.message, /HTTP\/2 error code 2\b/);
    assert.equal(r.stream!.rstCode, 2);
    assert.equal((await ok(send(c, '/r', 'y'), 'next')).toString(), 'fine');
    assert.equal(n, 2, 'the reset request was not sent again');
    assert.equal(srv.sessions.length, 1, 'the connection stays');
  });
});

describe('HTTP/2 client: keep-alive and connection policy', () => {
  test('keep-alive: headers then total silence (PINGs unanswered) fails the stream with Unavailable "PING timed out"', T, async (t) => {
    const srv = await rawServer(t, {
      onConnection: (conn) => (conn.answerPings = false),
      onRequest(conn, id) {
        conn.headers(id, GRPC_OK_HEADERS);
      },
    });
    const c = client(t, srv.url, { pingIntervalMs: 50, pingTimeoutMs: 50 });
    const r = send(c, '/k', 'x');
    const err = await r.done;
    assert.ok(err instanceof ConnectError);
    assert.equal(err.code, Code.Unavailable);
    assert.match(err.message, /PING timed out/);
    assert.equal(r.headers.length, 1, 'the headers did arrive');
    const conn = srv.conns[0]!;
    assert.ok(conn.frames.some((f) => f.type === F.PING && !(f.flags & F.FLAG_ACK)), 'the client sent a PING');
    await eventually(() => conn.closed, 'the client closed the connection');
    assert.equal(c.streamCount, 0);
  });

  test('keep-alive: a server that answers PINGs but sends nothing for many intervals keeps the stream', T, async (t) => {
    const srv = await nodeServer(t, (st) => {
      st.respond({ ':status': 200 });
      const l = srv.log.get(st.session!)!;
      // node:http2 answers PINGs by itself; end the stream once 4 of them came in.
      const onPing = () => {
        if (l.filter((e) => e === 'ping').length < 4) return;
        st.session!.off('ping', onPing);
        st.end('late');
      };
      st.session!.on('ping', onPing);
    });
    const c = client(t, srv.url, { pingIntervalMs: 50, pingTimeoutMs: 50 });
    const r = send(c, '/k', 'x');
    assert.equal((await ok(r)).toString(), 'late');
    assert.equal(srv.sessions.length, 1);
  });

  test('keep-alive: a stream that ends and another that starts while a PING is out never has two PINGs out at once', T, async (t) => {
    // The first stream's keep-alive PING is held unanswered; the stream ends and a second one
    // starts (count 1 → 0 → 1); then the PING is answered. From then on every PING is answered
    // 60 ms late (past the 50 ms interval): the client must keep one keep-alive timer (one PING at a time), or a
    // PING it overwrote times out although the server answers every one.
    let outstanding = 0;
    let maxOutstanding = 0;
    let answered = 0;
    let held: Frame | undefined;
    let delayed = false;
    const srv = await rawServer(t, {
      // Nothing answered automatically: the test holds and answers the PINGs.
      onConnection: (conn) => (conn.answerPings = false),
      onFrame(conn, f) {
        if (f.type !== F.PING || f.flags & F.FLAG_ACK) return;
        if (!delayed) {
          held = f;
          return;
        }
        outstanding++;
        maxOutstanding = Math.max(maxOutstanding, outstanding);
        setTimeout(() => {
          outstanding--;
          answered++;
          conn.write(F.pingFrame(f.payload, true));
          // Later than the PING interval: two keep-alive timers, whatever their phase, would overlap.
        }, 60);
      },
      onRequest(conn, id) {
        conn.headers(id, GRPC_OK_HEADERS);
        if (id === 3) {
          // The second stream is open: answer the held PING, then answer the rest late.
          delayed = true;
          conn.write(F.pingFrame(held!.payload, true));
        }
      },
    });
    const c = client(t, srv.url, { pingIntervalMs: 50, pingTimeoutMs: 2000 });
    let second: Recording | undefined;
    // The second stream starts from the first one's onClose: the connection was not idle in between.
    const first = send(c, '/k', 'one', { onClose: () => (second = send(c, '/k', 'two')) });
    const conn = await srv.conn(0);
    await eventually(() => held !== undefined, 'the first keep-alive PING');
    conn.headers(1, ['grpc-status', '0'], true);
    await ok(first, 'first');
    await eventually(() => answered >= 4 || second?.closes === 1, 'four more PINGs answered');
    assert.equal(second!.closes, 0, `second stream still open (${second!.err?.message})`);
    assert.equal(maxOutstanding, 1, 'one PING out at a time');
    conn.headers(3, ['grpc-status', '0'], true);
    await ok(second!, 'second');
    assert.equal(srv.conns.length, 1);
  });

  test('keep-alive backoff: GOAWAY ENHANCE_YOUR_CALM "too_many_pings" doubles the PING interval of the next connection (gRPC A8)', T, async (t) => {
    // The spacing of two keep-alive PINGs on a silent stream is the interval (each PING is
    // answered at once and the next is armed on the answer). On a quiet machine the first
    // connection's spacing is ~I; after the worker's too_many_pings the next connection's
    // must be at least 2I, measured here with a margin: a loaded machine can only make the
    // spacing longer.
    const I = 200;
    const pings: number[][] = [];
    const srv = await rawServer(t, {
      onFrame(conn, f) {
        if (f.type !== F.PING || f.flags & F.FLAG_ACK) return;
        const at = (pings[conn.index] ??= []);
        at.push(performance.now());
        if (at.length !== 2) return;
        if (conn.index === 0) conn.write(F.goawayFrame(1, F.ENHANCE_YOUR_CALM, 'too_many_pings'));
        conn.echo(1);
      },
    });
    const c = client(t, srv.url, { pingIntervalMs: I, pingTimeoutMs: 10_000 });
    assert.equal((await ok(send(c, '/a', 'one'), 'first')).toString(), 'one');
    await frameOn(srv.conns[0]!, (f) => f.type === F.GOAWAY, 'the client closed the told-off connection');
    assert.equal((await ok(send(c, '/b', 'two'), 'second')).toString(), 'two');
    assert.equal(srv.conns.length, 2, 'the second stream went on a new connection');
    const spacing = pings[1]![1]! - pings[1]![0]!;
    assert.ok(spacing >= 1.5 * I, `PINGs ${spacing.toFixed(0)} ms apart after the backoff (interval ${I}, doubled ${2 * I})`);
  });

  test('verify before reuse: a connection idle past the PING interval is PINGed before the next stream goes on it', T, async (t) => {
    const srv = await nodeServer(t, (st) => {
      st.respond({ ':status': 200 });
      st.end('ok');
    });
    const c = client(t, srv.url, { pingIntervalMs: 50, pingTimeoutMs: 5000 });
    await ok(send(c, '/v', 'one'));
    await sleep(150); // at least: idle for longer than pingIntervalMs
    await ok(send(c, '/v', 'two'));
    assert.equal(srv.sessions.length, 1);
    const l = srv.log.get(srv.sessions[0]!)!;
    const streams = l.flatMap((e, i) => (e === 'stream' ? [i] : []));
    assert.equal(streams.length, 2);
    assert.equal(l[streams[1]! - 1], 'ping', `a PING right before the second stream: ${l.join(' ')}`);
  });

  test('verify before reuse: an idle connection that does not answer the PING is replaced; the caller sees no error', T, async (t) => {
    const srv = await nodeServer(t, (st) => {
      st.respond({ ':status': 200 });
      st.end(`ok-${srv.sessions.indexOf(st.session as http2.ServerHttp2Session)}`);
    });
    const px = await proxy(t, srv.port);
    const c = client(t, px.url, { pingIntervalMs: 50, pingTimeoutMs: 50 });
    assert.equal((await ok(send(c, '/v', 'one'))).toString(), 'ok-0');
    await sleep(150); // at least: idle for longer than pingIntervalMs
    px.pairs[0]!.frozen = true;
    const r = send(c, '/v', 'two');
    assert.equal((await ok(r, 'the request after the unanswered PING')).toString(), 'ok-1');
    assert.equal(px.pairs.length, 2);
    assert.equal(srv.sessions.length, 2);
    assert.deepEqual(srv.log.get(srv.sessions[0]!)!.filter((e) => e === 'stream'), ['stream'], 'nothing more went on the frozen connection');
    await eventually(() => c.connectionCount === 1, 'one connection held');
  });

  test('idle close: the connection closes after its last stream; a later request reconnects', T, async (t) => {
    const srv = await nodeServer(t, (st) => {
      st.respond({ ':status': 200 });
      st.end('ok');
    });
    const c = client(t, srv.url, { idleConnectionTimeoutMs: 50 });
    await ok(send(c, '/i', 'one'));
    await eventually(() => srv.log.get(srv.sessions[0]!)!.includes('close'), 'the server saw the connection close');
    assert.ok(srv.log.get(srv.sessions[0]!)!.includes(`goaway:${http2.constants.NGHTTP2_NO_ERROR}`), 'with a GOAWAY NO_ERROR');
    assert.equal(c.connectionCount, 0);
    await ok(send(c, '/i', 'two'));
    assert.equal(srv.sessions.length, 2);
  });

  test('idle close counts from the last stream: a stream inside the limit pushes the close back', T, async (t) => {
    const IDLE_MS = 300;
    const srv = await nodeServer(t, (st) => {
      st.respond({ ':status': 200 });
      st.end('ok');
    });
    const c = client(t, srv.url, { idleConnectionTimeoutMs: IDLE_MS });
    const closedAt = new Map<http2.Http2Session, number>();
    const watch = (s: http2.Http2Session) => closedAt.has(s) || s.once('close', () => closedAt.set(s, performance.now()));
    await ok(send(c, '/i', 'one'));
    watch(srv.sessions[0]!);
    await sleep(IDLE_MS / 2); // the idle timer armed after the first stream is half-way
    await ok(send(c, '/i', 'two'));
    const lastEnd = performance.now();
    // (On a host slow enough, the first connection closed before the second stream: the
    // second's connection is the one measured.)
    const session = srv.sessions.at(-1)!;
    if (session !== srv.sessions[0]) watch(session);
    await eventually(() => closedAt.has(session), 'the connection closed once idle');
    assert.ok(closedAt.get(session)! - lastEnd >= IDLE_MS - 5, `closed ${Math.round(closedAt.get(session)! - lastEnd)} ms after its last stream ended, not before ${IDLE_MS}`);
  });

  test('connection refused: Unavailable', T, async (t) => {
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const c = client(t, `http://127.0.0.1:${port}`);
    const err = await send(c, '/x', 'x').done;
    assert.ok(err instanceof ConnectError);
    assert.equal(err.code, Code.Unavailable);
    assert.equal(c.connectionCount, 0);
  });

  test('connect timeout: a TLS server that never answers the handshake fails the stream with Unavailable', T, async (t) => {
    // (Over plain TCP the client does not wait for the server's SETTINGS, and a local
    // address that drops SYNs cannot be had reliably; a TLS handshake that never completes
    // is what connectTimeoutMs bounds.)
    const socks: net.Socket[] = [];
    const silent = net.createServer((s) => {
      socks.push(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => {
      for (const s of socks) s.destroy();
      silent.close(() => r());
    }));
    const c = client(t, `https://127.0.0.1:${(silent.address() as AddressInfo).port}`, { connectTimeoutMs: 100 });
    const err = await send(c, '/x', 'x').done;
    assert.ok(err instanceof ConnectError);
    assert.equal(err.code, Code.Unavailable);
    assert.match(err.message, /timed out/);
    assert.equal(socks.length, 1, 'the TCP connection was made');
  });

  test('close(err) while streams are open (and one waits for a slot): every stream gets err; later requests fail with it asynchronously', T, async (t) => {
    let accepted = 0;
    const srv = await nodeServer(t, (st) => {
      accepted++;
      if (accepted === 1) st.respond({ ':status': 200 }); // one with headers, one without
    }, { maxConcurrentStreams: 2 });
    const c = client(t, srv.url);
    const rs = [send(c, '/c', 'a'), send(c, '/c', 'b'), send(c, '/c', 'c')];
    // Two at the server; the third waits for a slot (refused first, if it went out before the SETTINGS).
    await eventually(() => accepted === 2 && c.streamCount === 2, 'two streams open at the server');
    const err = new ConnectError('shutting down', Code.Unavailable);
    c.close(err);
    for (const [i, r] of rs.entries()) {
      assert.equal(await r.done, err, `stream ${i}`);
      assert.equal(r.closes, 1);
    }
    const late = send(c, '/c', 'd');
    assert.equal(late.closes, 0, 'not failed synchronously');
    assert.equal(await late.done, err);
    assert.equal(c.connectionCount, 0);
    await eventually(() => srv.log.get(srv.sessions[0]!)!.includes('close'), 'the server saw the connection close');
    assert.equal(accepted, 2);
  });

  test('cancel: RST_STREAM CANCEL at the server, Canceled at the handler, the connection stays', T, async (t) => {
    const rst: number[] = [];
    const srv = await nodeServer(t, (st) => {
      st.on('close', () => rst.push(st.rstCode));
      st.respond({ ':status': 200 });
      if (st.id === 1) st.write('first bytes');
      else st.end('after');
    });
    const c = client(t, srv.url);
    let r: Recording;
    r = send(c, '/x', 'x', { onData: () => r.stream!.cancel() });
    const err = await r.done;
    assert.ok(err instanceof ConnectError);
    assert.equal(err.code, Code.Canceled);
    await eventually(() => rst.length === 1, 'the server saw the stream close');
    assert.equal(rst[0], http2.constants.NGHTTP2_CANCEL);
    assert.equal((await ok(send(c, '/x', 'y'), 'next')).toString(), 'after');
    assert.equal(srv.sessions.length, 1);
    assert.equal(c.streamCount, 0);
  });

  test('3000 sequential + 64 concurrent streams on one connection: the HPACK table stays in sync, the counts come back', { timeout: 120_000 }, async (t) => {
    const srv = await nodeServer(t, (st) => {
      void readAll(st).then((b) => {
        const i = Number(b.toString());
        // Values that change every response and some that repeat: the server's encoder
        // indexes them in (and evicts them from) its dynamic table.
        st.respond({ ':status': 200, 'content-type': 'application/grpc', 'x-seq': String(i), 'x-rot': `rot-${i % 37}`, 'x-const': 'c'.repeat(100) });
        st.end(`body-${i}`);
      });
    });
    const c = client(t, srv.url);
    const check = async (i: number) => {
      const r = send(c, '/m', String(i));
      assert.equal((await ok(r, `request ${i}`)).toString(), `body-${i}`);
      const f = r.headers[0]!.fields;
      assert.equal(field(f, ':status'), '200');
      assert.equal(field(f, 'x-seq'), String(i));
      assert.equal(field(f, 'x-rot'), `rot-${i % 37}`);
      assert.equal(field(f, 'x-const'), 'c'.repeat(100));
    };
    for (let i = 0; i < 3000; i++) {
      await check(i);
      assert.equal(c.streamCount, 0);
      assert.equal(c.connectionCount, 1);
    }
    await Promise.all(Array.from({ length: 64 }, (_, k) => check(3000 + k)));
    assert.equal(c.streamCount, 0);
    assert.equal(c.connectionCount, 1);
    assert.equal(srv.sessions.length, 1);
  });
});

describe('HTTP/2 client: what node:http2 will not send (raw server)', () => {
  const cases: Array<{ name: string; code: number; bad: (c: RawConn, id: number) => Buffer }> = [
    { name: 'DATA on stream 0', code: F.PROTOCOL_ERROR, bad: () => F.frame(F.DATA, 0, 0, Buffer.from('x')) },
    // 0x80: indexed field 0, never valid (RFC 7541 §6.1).
    { name: 'a HEADERS block with invalid HPACK', code: F.COMPRESSION_ERROR, bad: (_c, id) => F.frame(F.HEADERS, F.FLAG_END_HEADERS, id, Buffer.from([0x80])) },
    { name: 'a frame longer than 16384', code: F.FRAME_SIZE_ERROR, bad: (c, id) => Buffer.concat([
      F.frame(F.HEADERS, F.FLAG_END_HEADERS, id, c.enc.encode(GRPC_OK_HEADERS)),
      F.frame(F.DATA, 0, id, Buffer.alloc(16_385)),
    ]) },
    { name: 'PUSH_PROMISE', code: F.PROTOCOL_ERROR, bad: (c, id) => {
      const block = c.enc.encode([':method', 'GET', ':scheme', 'http', ':path', '/pushed', ':authority', 'x']);
      const p = Buffer.alloc(4 + block.length);
      p.writeUInt32BE(2, 0);
      block.copy(p, 4);
      return F.frame(F.PUSH_PROMISE, F.FLAG_END_HEADERS, id, p);
    } },
    { name: 'CONTINUATION without HEADERS', code: F.PROTOCOL_ERROR, bad: (c, id) => F.frame(F.CONTINUATION, F.FLAG_END_HEADERS, id, c.enc.encode(GRPC_OK_HEADERS)) },
  ];
  for (const k of cases) {
    test(`protocol error: ${k.name} fails the stream with Internal, GOAWAY ${k.code}, and the next request reconnects`, T, async (t) => {
      const srv = await rawServer(t, {
        onRequest(conn, id) {
          if (conn.index === 0) conn.write(k.bad(conn, id));
          else conn.echo(id);
        },
      });
      const c = client(t, srv.url);
      const r = send(c, '/p', 'x');
      const err = await r.done;
      assert.ok(err instanceof ConnectError);
      assert.equal(err.code, Code.Internal);
      assert.match(err.message, /HTTP\/2 protocol error/);
      const c0 = srv.conns[0]!;
      await frameOn(c0, (f) => f.type === F.GOAWAY, 'the client sent GOAWAY');
      assert.deepEqual(c0.goawayCodes(), [k.code]);
      await eventually(() => c0.closed, 'the client closed the connection');
      assert.equal((await ok(send(c, '/p', 'again'), 'next')).toString(), 'again');
      assert.equal(srv.conns.length, 2);
    });
  }

  test('trailers split across HEADERS + CONTINUATION (a 40 KB grpc-message), padded HEADERS and DATA: all decoded', T, async (t) => {
    const big = 'm'.repeat(40_000);
    const srv = await rawServer(t, {
      onRequest(conn, id) {
        // Response headers: PADDED | PRIORITY, 7 bytes of padding.
        const hb = conn.enc.encode([...GRPC_OK_HEADERS, 'x-padded', 'yes']);
        const pad = 7;
        const hp = Buffer.alloc(1 + 5 + hb.length + pad, 0);
        hp[0] = pad;
        hp.writeUInt32BE(0, 1); // stream dependency
        hp[5] = 15; // weight
        hb.copy(hp, 6);
        conn.write(F.frame(F.HEADERS, F.FLAG_END_HEADERS | F.FLAG_PADDED | F.FLAG_PRIORITY, id, hp));
        const padded = (s: string, n: number) => {
          const b = Buffer.alloc(1 + s.length + n, 0xee);
          b[0] = n;
          b.write(s, 1, 'latin1');
          return F.frame(F.DATA, F.FLAG_PADDED, id, b);
        };
        conn.write(padded('hello ', 10));
        conn.write(padded('', 5)); // padding only
        conn.write(padded('world', 0)); // the PADDED flag with no padding
        // Trailers: one block across HEADERS (END_STREAM, no END_HEADERS) and two CONTINUATIONs.
        const tb = conn.enc.encode(['grpc-status', '3', 'grpc-message', big]);
        const a = 16_000;
        const b = 32_000;
        assert.ok(tb.length > b);
        conn.write(
          F.frame(F.HEADERS, F.FLAG_END_STREAM, id, tb.subarray(0, a)),
          F.frame(F.CONTINUATION, 0, id, tb.subarray(a, b)),
          F.frame(F.CONTINUATION, F.FLAG_END_HEADERS, id, tb.subarray(b)),
        );
      },
    });
    const c = client(t, srv.url);
    const r = send(c, '/t', 'x');
    assert.equal((await ok(r)).toString(), 'hello world');
    assert.equal(r.headers.length, 2);
    assert.deepEqual(r.headers[0], { fields: [...GRPC_OK_HEADERS, 'x-padded', 'yes'], end: false });
    assert.equal(r.headers[1]!.end, true);
    assert.deepEqual(r.headers[1]!.fields, ['grpc-status', '3', 'grpc-message', big]);
    // The same through the gRPC layer: the status and the whole message.
    const s = openServerStream(c, '/t', frameMessage(new Uint8Array(0)), (b, a, e) => Buffer.from(b.subarray(a, e)));
    const err = await s.next().then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof ConnectError);
    assert.equal(err.code, Code.InvalidArgument);
    assert.equal(err.rawMessage, big);
    assert.equal(srv.conns.length, 1);
  });

  test('a trailers-only error before the server read the whole body: the call fails with its status, RST_STREAM NO_ERROR, the connection stays', T, async (t) => {
    let answered = false;
    const srv = await rawServer(t, {
      onFrame(conn, f) {
        const r = conn.requests.get(f.id);
        if (conn.index !== 0 || f.id !== 1 || !r || answered || r.body.length < F.DEFAULT_WINDOW) return;
        // The stream's window (65535, never given back) is used up: the client is blocked.
        answered = true;
        conn.headers(1, [...GRPC_OK_HEADERS, 'grpc-status', '3', 'grpc-message', 'request too large'], true);
      },
      onRequest(conn, id) {
        if (id !== 1) conn.echo(id);
      },
    });
    const c = client(t, srv.url);
    const s = openServerStream(c, '/big', frameMessage(randomBytes(200_000)), (b, a, e) => Buffer.from(b.subarray(a, e)));
    const err = await s.next().then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof ConnectError);
    assert.equal(err.code, Code.InvalidArgument);
    assert.match(err.message, /request too large/);
    const conn = srv.conns[0]!;
    const rst = await frameOn(conn, (f) => f.type === F.RST_STREAM && f.id === 1, 'the client reset stream 1');
    assert.equal(rst.payload.readUInt32BE(0), F.NO_ERROR);
    assert.equal(conn.requests.get(1)!.body.length, F.DEFAULT_WINDOW, 'no more than the stream window was sent');
    assert.equal(conn.requests.get(1)!.ended, false);
    assert.equal((await ok(send(c, '/small', 'small'), 'next')).toString(), 'small');
    assert.equal(srv.conns.length, 1);
    assert.equal(c.streamCount, 0);
  });
});
