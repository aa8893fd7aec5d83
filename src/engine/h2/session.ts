// One HTTP/2 client connection to an engine worker, framed in JS on a plain socket (h2c) or a
// TLS socket (ALPN h2). Why not node:http2: its per-stream objects and its one call from
// C++ into JS per DATA frame (with a microtask checkpoint each) were most of the engine
// side of a streamed token and ~20 µs of a unary request; here one socket read is one JS
// call that walks all of the read's frames (figures in bench/RESULTS.md, "Engine HTTP/2
// in JS"; reasoning in docs/architecture.md). What it implements of RFC 9113, as a client
// that never accepts pushes: the preface and SETTINGS exchange, HEADERS/CONTINUATION with
// HPACK (hpack.ts), DATA with padding, both directions of flow control (connection and
// stream windows), RST_STREAM, PING (answered, and sent for keep-alive), GOAWAY (new
// streams elsewhere; streams the worker never took are handed back for another connection),
// SETTINGS_MAX_CONCURRENT_STREAMS (streams past it wait their turn), and connection errors
// (GOAWAY with the code, then close). Policy (when to connect, keep-alive timing, idle
// close) is the client's (client.ts).

import net from 'node:net';
import tls from 'node:tls';

import { Code, ConnectError } from '@connectrpc/connect';

import * as F from './frames.js';
import { HpackDecoder } from './hpack.js';
import { bodyLength, FrameQueue, pushSlices } from './outgoing.js';
import { socketError } from './socket-error.js';

import { H2Stream, STREAM_WINDOW } from './stream.js';

export type { RequestBody } from './outgoing.js';
export { H2Stream, STREAM_WINDOW, type H2StreamHandler } from './stream.js';

/** Our receive window per connection (a stream's: STREAM_WINDOW, stream.ts). */
const CONNECTION_WINDOW = 16 << 20;
/** Largest header block we accept (HEADERS + CONTINUATION), and the header list size we advertise. */
const MAX_HEADER_BLOCK = 256 << 10;
const MAX_HEADER_LIST = 64 << 10;
/** The read buffer of an h2c connection: what one socket read can bring (libuv's own read size). */
const READ_BUFFER = 64 << 10;
/** How many times a stream the worker never processed (GOAWAY past it, REFUSED_STREAM) is tried again. */
const MAX_REPLACE = 3;

export interface SessionTarget {
  host: string;
  port: number;
  tls: boolean;
}

export interface SessionEvents {
  /** The connection will take no new streams (GOAWAY received, ids used up, closing). */
  onDraining(s: H2Session, goawayCode: number, debug: string): void;
  /** Streams this connection cannot carry but that no worker has seen: place them elsewhere. */
  onReplace(s: H2Session, streams: H2Stream[]): void;
  /** The connection is gone; every stream on it has been closed. */
  onClosed(s: H2Session, err: ConnectError | undefined): void;
  /** The count of open streams went 0 → 1 (true) or 1 → 0 (false). */
  onActive(s: H2Session, active: boolean): void;
}

type State = 'open' | 'draining' | 'closed';

export class H2Session {
  private readonly socket: net.Socket;
  private state: State = 'open';
  private readonly streams = new Map<number, H2Stream>();
  /** Streams waiting for SETTINGS_MAX_CONCURRENT_STREAMS or for a PING that verifies the connection. */
  private waiting: H2Stream[] = [];
  /** Streams with body bytes waiting for a window. */
  private blocked: H2Stream[] = [];
  private nextId = 1;
  /**
   * Until the worker's SETTINGS say otherwise, at most 100 streams (nghttp2's assumption too):
   * more on a fresh connection to a worker with a lower limit would be refused and sent again.
   */
  private peerMaxStreams = 100;
  private gotSettings = false;
  private peerInitialWindow = F.DEFAULT_WINDOW;
  private peerMaxFrame = F.DEFAULT_MAX_FRAME;
  private connSendWindow = F.DEFAULT_WINDOW;
  private connRecvUnacked = 0;
  private readonly decoder = new HpackDecoder(4096, MAX_HEADER_LIST);
  // A header block spanning CONTINUATION frames.
  private hdrStream = 0;
  private hdrEndStream = false;
  private hdrParts: Buffer[] = [];
  private hdrBytes = 0;
  /** Bytes of a frame cut by the end of a socket read. */
  private rest: Buffer | undefined;
  private readonly frames: FrameQueue;
  /** Set by every socket read; the keep-alive clears it (client.ts). */
  readSince = false;
  /** The PING we sent and wait for, if any. */
  private pingPayload: Buffer | undefined;
  private onPingAck: (() => void) | undefined;
  private pingSeq = 0;
  private verifying = false;
  private connectTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly target: SessionTarget,
    private readonly events: SessionEvents,
    connectTimeoutMs: number,
  ) {
    const onConnected = () => this.onConnected();
    if (target.tls) {
      this.socket = tls.connect({ host: target.host, port: target.port, ALPNProtocols: ['h2'], servername: net.isIP(target.host) ? undefined : target.host }, onConnected);
      this.socket.on('data', (d: Buffer) => this.onSocketData(d, d.length));
    } else {
      // h2c: each socket read lands in this connection's one buffer (net's `onread`), handed
      // straight to the frame parser: no Buffer allocated per read, no Readable stream (its
      // push, 'data' event and read-more tick) between the socket and the frames.
      const onread = {
        buffer: Buffer.allocUnsafe(READ_BUFFER),
        callback: (n: number, b: Uint8Array): boolean => {
          this.onSocketData(b as Buffer, n);
          return true;
        },
      };
      this.socket = net.connect({ host: target.host, port: target.port, onread }, onConnected);
    }
    this.socket.setNoDelay(true);
    this.frames = new FrameQueue(this.socket);
    this.socket.unref();
    this.socket.on('error', (err) => this.destroy(socketError(err)));
    this.socket.on('close', () => this.destroy(new ConnectError('connection to the worker closed mid-stream', Code.Unavailable)));
    this.connectTimer = setTimeout(() => this.destroy(new ConnectError('connection establishment timed out', Code.Unavailable)), connectTimeoutMs);
    this.connectTimer.unref();
    // Written before the socket connects (the socket keeps it until then).
    this.write(F.CLIENT_PREFACE);
    this.write(F.settingsFrame([
      [F.SETTINGS_ENABLE_PUSH, 0],
      [F.SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW],
      [F.SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST],
    ]));
    if (CONNECTION_WINDOW > F.DEFAULT_WINDOW) this.write(F.windowUpdateFrame(0, CONNECTION_WINDOW - F.DEFAULT_WINDOW));
  }

  /** Takes new streams. */
  get usable(): boolean {
    return this.state === 'open';
  }

  get streamCount(): number {
    return this.streams.size;
  }

  /** Open `s` now, or once a slot (or the connection's verification) allows. */
  open(s: H2Stream): void {
    s.session = this;
    if (this.verifying || this.streams.size >= this.peerMaxStreams) this.waiting.push(s);
    else this.start(s);
  }

  private start(s: H2Stream): void {
    const id = this.nextId;
    this.nextId += 2;
    s.id = id;
    s.sendWindow = this.peerInitialWindow;
    this.streams.set(id, s);
    if (this.streams.size === 1) this.events.onActive(this, true);
    const hb = s.headerBlock;
    const body = s.body;
    const bodyLen = body ? bodyLength(body) : 0;
    // The usual request: HEADERS and the whole body in one buffer (and one write).
    if (body && Buffer.isBuffer(body) && bodyLen <= this.peerMaxFrame && bodyLen <= s.sendWindow && bodyLen <= this.connSendWindow) {
      const buf = Buffer.allocUnsafe(2 * F.FRAME_HEADER + hb.length + bodyLen);
      F.writeFrameHeader(buf, 0, hb.length, F.HEADERS, F.FLAG_END_HEADERS, id);
      hb.copy(buf, F.FRAME_HEADER);
      const o = F.FRAME_HEADER + hb.length;
      F.writeFrameHeader(buf, o, bodyLen, F.DATA, F.FLAG_END_STREAM, id);
      body.copy(buf, o + F.FRAME_HEADER);
      s.sendWindow -= bodyLen;
      this.connSendWindow -= bodyLen;
      s.localEnded = true;
      this.write(buf);
    } else {
      const h = Buffer.allocUnsafe(F.FRAME_HEADER + hb.length);
      F.writeFrameHeader(h, 0, hb.length, F.HEADERS, F.FLAG_END_HEADERS | (bodyLen === 0 ? F.FLAG_END_STREAM : 0), id);
      hb.copy(h, F.FRAME_HEADER);
      this.write(h);
      if (bodyLen === 0) s.localEnded = true;
      else this.sendBody(s);
    }
    // Stream ids are 31 bits: near the end, new streams go to a new connection.
    if (this.nextId > F.MAX_WINDOW - 2 && this.state === 'open') this.drain(F.NO_ERROR, 'stream ids used up');
  }

  /** Send what the windows allow of `s`'s body; the rest waits for WINDOW_UPDATE. */
  private sendBody(s: H2Stream): void {
    const body = s.body!;
    const total = bodyLength(body);
    while (s.bodyOff < total) {
      const n = Math.min(s.sendWindow, this.connSendWindow, this.peerMaxFrame, total - s.bodyOff);
      if (n <= 0) {
        if (!s.blocked) {
          s.blocked = true;
          this.blocked.push(s);
        }
        return;
      }
      const last = s.bodyOff + n === total;
      const h = Buffer.allocUnsafe(F.FRAME_HEADER);
      F.writeFrameHeader(h, 0, n, F.DATA, last ? F.FLAG_END_STREAM : 0, s.id);
      this.write(h);
      if (Buffer.isBuffer(body)) this.write(body.subarray(s.bodyOff, s.bodyOff + n));
      else pushSlices(body, s.bodyOff, n, (b) => this.write(b));
      s.bodyOff += n;
      s.sendWindow -= n;
      this.connSendWindow -= n;
    }
    s.localEnded = true;
    if (s.remoteEnded) this.closeStream(s, undefined);
  }

  private sendBlocked(): void {
    if (this.blocked.length === 0) return;
    const list = this.blocked;
    this.blocked = [];
    for (const s of list) {
      s.blocked = false;
      if (!s.closed && !s.localEnded) this.sendBody(s);
    }
  }

  /** @internal A resumed stream acknowledges what it left unread. */
  ack(s: H2Stream): void {
    if (s.recvUnacked > 0 && !s.remoteEnded && this.state !== 'closed') {
      this.write(F.windowUpdateFrame(s.id, s.recvUnacked));
      s.recvWindow += s.recvUnacked;
      s.recvUnacked = 0;
    }
  }

  /** @internal RST_STREAM `code` and close `s` with `err`. */
  reset(s: H2Stream, code: number, err: ConnectError): void {
    if (s.closed) return;
    if (s.id === 0) {
      const i = this.waiting.indexOf(s);
      if (i >= 0) this.waiting.splice(i, 1);
      s.closed = true;
      s.handler.onClose(err);
      return;
    }
    if (this.state !== 'closed') this.write(F.rstStreamFrame(s.id, code));
    this.closeStream(s, err);
  }

  /** Send a PING; `onAck` when it is answered. One at a time. */
  ping(onAck: () => void): void {
    if (this.state === 'closed') return;
    const p = Buffer.allocUnsafe(8);
    p.writeUInt32BE(0x706f7274, 0); // 'port'
    p.writeUInt32BE(++this.pingSeq >>> 0, 4);
    this.pingPayload = p;
    this.onPingAck = onAck;
    this.write(F.pingFrame(p, false));
  }

  /** Hold new streams until a PING comes back (a connection idle for long may be dead). */
  verify(onAck: () => void): void {
    this.verifying = true;
    this.ping(() => {
      this.verifying = false;
      onAck();
      this.startWaiting();
    });
  }

  get isVerifying(): boolean {
    return this.verifying;
  }

  /** Stop taking streams; close once the open ones end. */
  drain(code: number, debug: string): void {
    if (this.state !== 'open') return;
    this.state = 'draining';
    this.events.onDraining(this, code, debug);
    this.replace(this.waiting.splice(0));
    if (this.streams.size === 0) this.close();
  }

  /** Close now: a GOAWAY NO_ERROR, the socket, and every stream with `err`. */
  close(err?: ConnectError): void {
    if (this.state === 'closed') return;
    this.write(F.goawayFrame(0, F.NO_ERROR));
    this.flush();
    this.destroy(err ?? new ConnectError('connection to the worker closed', Code.Unavailable), true);
  }

  /** The connection is over: every stream (and every waiting one) fails with `err`. */
  destroy(err: ConnectError, graceful = false): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.connectTimer) clearTimeout(this.connectTimer);
    this.connectTimer = undefined;
    this.onPingAck = undefined;
    if (graceful) this.socket.end(() => this.socket.destroy());
    else this.socket.destroy();
    const waiting = this.waiting.splice(0);
    for (const s of waiting) {
      s.closed = true;
      s.handler.onClose(err);
    }
    for (const s of [...this.streams.values()]) this.closeStream(s, err);
    this.events.onClosed(this, err);
  }

  // ---- reading ----

  private onConnected(): void {
    if (this.target.tls && (this.socket as tls.TLSSocket).alpnProtocol !== 'h2') {
      this.destroy(new ConnectError('the worker did not negotiate HTTP/2 (ALPN h2) over TLS', Code.Unavailable));
      return;
    }
    if (this.connectTimer) clearTimeout(this.connectTimer);
    this.connectTimer = undefined;
  }

  /** One socket read: `chunk[0, len)`, valid only during the call (an h2c read buffer is reused). */
  private onSocketData(chunk: Buffer, len: number): void {
    if (this.state === 'closed') return;
    this.readSince = true;
    let buf = chunk;
    let n = len;
    if (this.rest) {
      buf = Buffer.concat([this.rest, chunk.subarray(0, len)]);
      n = buf.length;
      this.rest = undefined;
    }
    let off = 0;
    while (n - off >= F.FRAME_HEADER) {
      const len = (buf[off]! << 16) | (buf[off + 1]! << 8) | buf[off + 2]!;
      // We never raise SETTINGS_MAX_FRAME_SIZE above the default.
      if (len > F.DEFAULT_MAX_FRAME) return this.connectionError(F.FRAME_SIZE_ERROR, `a ${len}-byte frame`);
      if (n - off - F.FRAME_HEADER < len) break;
      const type = buf[off + 3]!;
      const flags = buf[off + 4]!;
      const id = buf.readUInt32BE(off + 5) & F.MAX_WINDOW;
      const p = off + F.FRAME_HEADER;
      off = p + len;
      if (this.hdrStream !== 0 && type !== F.CONTINUATION) return this.connectionError(F.PROTOCOL_ERROR, 'a header block interrupted by another frame');
      switch (type) {
        case F.DATA:
          this.onDataFrame(buf, p, off, flags, id);
          break;
        case F.HEADERS:
          this.onHeadersFrame(buf, p, off, flags, id);
          break;
        case F.CONTINUATION:
          this.onContinuation(buf, p, off, flags, id);
          break;
        case F.PRIORITY:
          if (id === 0) return this.connectionError(F.PROTOCOL_ERROR, 'PRIORITY on stream 0');
          break;
        case F.RST_STREAM:
          this.onRstStream(buf, p, len, id);
          break;
        case F.SETTINGS:
          this.onSettings(buf, p, len, flags, id);
          break;
        case F.PUSH_PROMISE:
          return this.connectionError(F.PROTOCOL_ERROR, 'PUSH_PROMISE with push disabled');
        case F.PING:
          this.onPing(buf, p, len, flags, id);
          break;
        case F.GOAWAY:
          this.onGoaway(buf, p, len, id);
          break;
        case F.WINDOW_UPDATE:
          this.onWindowUpdate(buf, p, len, id);
          break;
        default:
          break; // unknown frame types are ignored (§5.5)
      }
      if ((this.state as State) === 'closed') return;
    }
    // (A copy: the bytes of the next read go where these are.)
    if (off < n) this.rest = Buffer.from(buf.subarray(off, n));
    this.flush();
  }

  private onDataFrame(buf: Buffer, p: number, end: number, flags: number, id: number): void {
    const len = end - p;
    if (id === 0) return this.connectionError(F.PROTOCOL_ERROR, 'DATA on stream 0');
    // The connection window counts every DATA byte, whatever its stream.
    this.connRecvUnacked += len;
    if (this.connRecvUnacked >= CONNECTION_WINDOW / 2) {
      this.write(F.windowUpdateFrame(0, this.connRecvUnacked));
      this.connRecvUnacked = 0;
    }
    const s = this.streams.get(id);
    if (!s) {
      // A stream we reset or that ended may still have frames on the way; a stream never opened may not.
      if (id >= this.nextId) this.connectionError(F.PROTOCOL_ERROR, `DATA on idle stream ${id}`);
      return;
    }
    let a = p;
    let b = end;
    if (flags & F.FLAG_PADDED) {
      if (len < 1 || buf[p]! > len - 1) return this.connectionError(F.PROTOCOL_ERROR, 'DATA padding longer than the frame');
      a = p + 1;
      b = end - buf[p]!;
    }
    if (s.remoteEnded) return this.reset(s, F.STREAM_CLOSED, new ConnectError('worker sent DATA after the end of the stream', Code.Internal));
    if (!s.gotHeaders) return this.reset(s, F.PROTOCOL_ERROR, new ConnectError('worker sent DATA before the response headers', Code.Internal));
    s.recvWindow -= len;
    if (s.recvWindow < 0) return this.reset(s, F.FLOW_CONTROL_ERROR, new ConnectError("worker overran the stream's flow-control window", Code.Internal));
    s.recvUnacked += len;
    if (b > a) s.handler.onData(buf, a, b);
    if (s.closed) return;
    if (flags & F.FLAG_END_STREAM) this.remoteEnd(s);
    else if (!s.paused && s.recvUnacked >= STREAM_WINDOW / 2) this.ack(s);
  }

  private onHeadersFrame(buf: Buffer, p: number, end: number, flags: number, id: number): void {
    if (id === 0) return this.connectionError(F.PROTOCOL_ERROR, 'HEADERS on stream 0');
    let a = p;
    let b = end;
    if (flags & F.FLAG_PADDED) {
      if (b - a < 1) return this.connectionError(F.PROTOCOL_ERROR, 'HEADERS padding longer than the frame');
      const pad = buf[a++]!;
      if (pad > b - a) return this.connectionError(F.PROTOCOL_ERROR, 'HEADERS padding longer than the frame');
      b -= pad;
    }
    if (flags & F.FLAG_PRIORITY) {
      if (b - a < 5) return this.connectionError(F.PROTOCOL_ERROR, 'HEADERS priority past the frame');
      a += 5;
    }
    const endStream = (flags & F.FLAG_END_STREAM) !== 0;
    if (flags & F.FLAG_END_HEADERS) {
      this.onHeaderBlock(id, endStream, buf, a, b);
      return;
    }
    this.hdrStream = id;
    this.hdrEndStream = endStream;
    this.hdrParts = [Buffer.from(buf.subarray(a, b))];
    this.hdrBytes = b - a;
  }

  private onContinuation(buf: Buffer, p: number, end: number, flags: number, id: number): void {
    if (this.hdrStream === 0 || id !== this.hdrStream) return this.connectionError(F.PROTOCOL_ERROR, 'CONTINUATION without its HEADERS');
    this.hdrBytes += end - p;
    if (this.hdrBytes > MAX_HEADER_BLOCK) return this.connectionError(F.ENHANCE_YOUR_CALM, 'header block too large');
    this.hdrParts.push(Buffer.from(buf.subarray(p, end)));
    if (!(flags & F.FLAG_END_HEADERS)) return;
    const block = Buffer.concat(this.hdrParts);
    this.hdrParts = [];
    this.hdrStream = 0;
    this.onHeaderBlock(id, this.hdrEndStream, block, 0, block.length);
  }

  private onHeaderBlock(id: number, endStream: boolean, block: Buffer, a: number, b: number): void {
    // Decoded even for a stream we no longer track: the HPACK table is the connection's.
    let fields: string[];
    try {
      fields = this.decoder.decode(block, a, b);
    } catch (err) {
      return this.connectionError(F.COMPRESSION_ERROR, `bad header block: ${(err as Error).message}`);
    }
    const s = this.streams.get(id);
    if (!s) {
      if (id >= this.nextId || (id & 1) === 0) this.connectionError(F.PROTOCOL_ERROR, `HEADERS on stream ${id} we never opened`);
      return;
    }
    if (s.remoteEnded) return this.reset(s, F.STREAM_CLOSED, new ConnectError('worker sent headers after the end of the stream', Code.Internal));
    if (!s.gotHeaders) {
      // An informational (1xx) response is skipped; the real one follows.
      if (!endStream && fields[0] === ':status' && fields[1]!.charCodeAt(0) === 0x31) return;
      s.gotHeaders = true;
      s.handler.onHeaders(fields, endStream);
    } else {
      if (!endStream) return this.reset(s, F.PROTOCOL_ERROR, new ConnectError('worker sent trailers that do not end the stream', Code.Internal));
      s.handler.onTrailers(fields);
    }
    if (endStream && !s.closed) this.remoteEnd(s);
  }

  private onRstStream(buf: Buffer, p: number, len: number, id: number): void {
    if (len !== 4) return this.connectionError(F.FRAME_SIZE_ERROR, 'RST_STREAM of the wrong size');
    if (id === 0) return this.connectionError(F.PROTOCOL_ERROR, 'RST_STREAM on stream 0');
    const s = this.streams.get(id);
    if (!s) return;
    const code = buf.readUInt32BE(p);
    if (code === F.REFUSED_STREAM && !s.gotHeaders && s.replaced < MAX_REPLACE) {
      // Refused: the worker did not process it (RFC 9113 §8.7), so it may be sent again.
      this.forget(s);
      this.replace([s]);
      return;
    }
    s.rstCode = code;
    this.closeStream(s, new ConnectError(`stream reset by the worker (HTTP/2 error code ${code})`, Code.Aborted));
  }

  private onSettings(buf: Buffer, p: number, len: number, flags: number, id: number): void {
    if (id !== 0) return this.connectionError(F.PROTOCOL_ERROR, 'SETTINGS on a stream');
    if (flags & F.FLAG_ACK) {
      if (len !== 0) this.connectionError(F.FRAME_SIZE_ERROR, 'SETTINGS ACK with a payload');
      return;
    }
    if (len % 6 !== 0) return this.connectionError(F.FRAME_SIZE_ERROR, 'SETTINGS of the wrong size');
    let sawLimit = false;
    for (let o = p; o < p + len; o += 6) {
      const k = buf.readUInt16BE(o);
      const v = buf.readUInt32BE(o + 2);
      if (k === F.SETTINGS_MAX_CONCURRENT_STREAMS) {
        this.peerMaxStreams = v;
        sawLimit = true;
      }
      else if (k === F.SETTINGS_INITIAL_WINDOW_SIZE) {
        if (v > F.MAX_WINDOW) return this.connectionError(F.FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1');
        const delta = v - this.peerInitialWindow;
        this.peerInitialWindow = v;
        for (const s of this.streams.values()) {
          s.sendWindow += delta;
          // RFC 9113 §6.9.2: a change that takes a stream's window past 2^31-1 is a connection error.
          if (s.sendWindow > F.MAX_WINDOW) return this.connectionError(F.FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE takes a stream window above 2^31-1');
        }
      } else if (k === F.SETTINGS_MAX_FRAME_SIZE) {
        if (v < F.DEFAULT_MAX_FRAME || v > 0xffffff) return this.connectionError(F.PROTOCOL_ERROR, 'SETTINGS_MAX_FRAME_SIZE out of range');
        this.peerMaxFrame = v;
      } else if (k === F.SETTINGS_ENABLE_PUSH && v > 1) return this.connectionError(F.PROTOCOL_ERROR, 'SETTINGS_ENABLE_PUSH not 0 or 1');
      // HEADER_TABLE_SIZE: our encoder never uses the dynamic table. MAX_HEADER_LIST_SIZE: our requests are small.
    }
    // The first SETTINGS without a limit: the worker has none (RFC 9113 §6.5.2: unlimited).
    if (!this.gotSettings && !sawLimit) this.peerMaxStreams = Infinity;
    this.gotSettings = true;
    this.write(F.frame(F.SETTINGS, F.FLAG_ACK, 0));
    this.sendBlocked();
    this.startWaiting();
  }

  private onPing(buf: Buffer, p: number, len: number, flags: number, id: number): void {
    if (len !== 8) return this.connectionError(F.FRAME_SIZE_ERROR, 'PING of the wrong size');
    if (id !== 0) return this.connectionError(F.PROTOCOL_ERROR, 'PING on a stream');
    if (!(flags & F.FLAG_ACK)) {
      this.write(F.pingFrame(buf.subarray(p, p + 8), true));
      return;
    }
    const mine = this.pingPayload;
    if (mine && mine.equals(buf.subarray(p, p + 8))) {
      this.pingPayload = undefined;
      const f = this.onPingAck;
      this.onPingAck = undefined;
      f?.();
    }
  }

  private onGoaway(buf: Buffer, p: number, len: number, id: number): void {
    if (id !== 0) return this.connectionError(F.PROTOCOL_ERROR, 'GOAWAY on a stream');
    if (len < 8) return this.connectionError(F.FRAME_SIZE_ERROR, 'GOAWAY too short');
    const last = buf.readUInt32BE(p) & F.MAX_WINDOW;
    const code = buf.readUInt32BE(p + 4);
    const debug = buf.toString('latin1', p + 8, p + len);
    // Streams above `last` were not and will not be processed: they go to another connection.
    const unseen: H2Stream[] = [];
    for (const s of this.streams.values()) if (s.id > last) unseen.push(s);
    for (const s of unseen) this.forget(s);
    if (this.state === 'open') {
      this.state = 'draining';
      this.events.onDraining(this, code, debug);
    }
    this.replace([...unseen, ...this.waiting.splice(0)]);
    if (this.streams.size === 0) this.close();
  }

  private onWindowUpdate(buf: Buffer, p: number, len: number, id: number): void {
    if (len !== 4) return this.connectionError(F.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of the wrong size');
    const inc = buf.readUInt32BE(p) & F.MAX_WINDOW;
    if (id === 0) {
      if (inc === 0) return this.connectionError(F.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0');
      this.connSendWindow += inc;
      if (this.connSendWindow > F.MAX_WINDOW) return this.connectionError(F.FLOW_CONTROL_ERROR, 'connection window above 2^31-1');
    } else {
      const s = this.streams.get(id);
      if (!s) return;
      if (inc === 0) return this.reset(s, F.PROTOCOL_ERROR, new ConnectError('worker sent a WINDOW_UPDATE of 0', Code.Internal));
      s.sendWindow += inc;
      if (s.sendWindow > F.MAX_WINDOW) return this.reset(s, F.FLOW_CONTROL_ERROR, new ConnectError('stream window above 2^31-1', Code.Internal));
    }
    this.sendBlocked();
  }

  // ---- stream ends ----

  private remoteEnd(s: H2Stream): void {
    s.remoteEnded = true;
    if (!s.localEnded) {
      // The worker answered before taking the whole request: stop sending it (§8.1).
      this.write(F.rstStreamFrame(s.id, F.NO_ERROR));
      s.localEnded = true;
    }
    this.closeStream(s, undefined);
  }

  /** Drop `s` from this connection without telling its handler (it is placed again). */
  private forget(s: H2Stream): void {
    this.streams.delete(s.id);
    if (s.blocked) {
      const i = this.blocked.indexOf(s);
      if (i >= 0) this.blocked.splice(i, 1);
      s.blocked = false;
    }
    if (this.streams.size === 0) this.events.onActive(this, false);
  }

  private replace(list: H2Stream[]): void {
    if (list.length === 0) return;
    for (const s of list) {
      s.replaced++;
      s.id = 0;
      s.session = undefined;
      s.bodyOff = 0;
      s.localEnded = false;
      s.recvUnacked = 0;
      s.recvWindow = STREAM_WINDOW;
    }
    this.events.onReplace(this, list);
  }

  private closeStream(s: H2Stream, err: ConnectError | undefined): void {
    if (s.closed) return;
    s.closed = true;
    s.body = undefined;
    this.forget(s);
    s.handler.onClose(err);
    if (this.state === 'draining' && this.streams.size === 0) this.close();
    else this.startWaiting();
  }

  private startWaiting(): void {
    while (this.state === 'open' && !this.verifying && this.waiting.length > 0 && this.streams.size < this.peerMaxStreams) {
      this.start(this.waiting.shift()!);
    }
  }

  private connectionError(code: number, what: string): void {
    if (this.state === 'closed') return;
    // (Last stream id 0: the worker opens no streams.)
    this.write(F.goawayFrame(0, code, what));
    this.flush();
    this.destroy(new ConnectError(`HTTP/2 protocol error from the worker: ${what}`, Code.Internal));
  }

  // ---- writing ----

  /** Queue `b`; everything queued in one tick goes out in one socket write. */
  private write(b: Buffer): void {
    this.frames.push(b);
  }

  /** @internal */
  flush(): void {
    this.frames.flush();
  }

  /** @internal (client.ts) */
  refSocket(on: boolean): void {
    if (on) this.socket.ref();
    else this.socket.unref();
  }
}
