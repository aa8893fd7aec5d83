// The engine client's HTTP/2 connection to one worker, for the streams it opens itself
// (Generate): one session at a time, opened on first use and again after it closed or was
// told to go away; keep-alive PINGs while streams are open (a worker that stops answering
// fails its streams after about pingIntervalMs + pingTimeoutMs); a connection idle for
// longer than pingIntervalMs is verified with a PING before new streams go on it; an unused
// connection closes after idleConnectionTimeoutMs. The same rules connect-node's
// Http2SessionManager applies to the Connect (unary) rpcs' connection.

import { Code, ConnectError } from '@connectrpc/connect';

import { HpackEncoder } from './hpack.js';
import { H2Session, H2Stream, type H2StreamHandler, type RequestBody, type SessionEvents, type SessionTarget } from './session.js';
import { ENHANCE_YOUR_CALM } from './frames.js';

export interface H2ClientOptions {
  connectTimeoutMs: number;
  pingIntervalMs: number;
  pingTimeoutMs: number;
  idleConnectionTimeoutMs: number;
  /**
   * Headers of request() besides :method/:scheme/:path/:authority (flat [name, value, ...],
   * lowercase); requestWithHeaders() brings its own. Default none.
   */
  headers: readonly string[];
}

/** The engine client's connection defaults (EngineClientOptions documents them). */
export const DEFAULT_CONNECTION: Omit<H2ClientOptions, 'headers'> = {
  connectTimeoutMs: 3000,
  pingIntervalMs: 10_000,
  pingTimeoutMs: 5000,
  idleConnectionTimeoutMs: 15 * 60_000,
};

export class H2Client implements SessionEvents {
  private session: H2Session | undefined;
  /** Sessions told to go away that still carry streams. */
  private readonly draining = new Set<H2Session>();
  private readonly target: SessionTarget;
  private readonly authority: string;
  private readonly encoder = new HpackEncoder();
  private readonly blocks = new Map<string, Buffer>();
  private pingIntervalMs: number;
  private closedWith: ConnectError | undefined;
  // Per session: the keep-alive timer, the PING deadline, the idle timer, when it went idle.
  private readonly timers = new Map<H2Session, SessionTimers>();
  private readonly opts: H2ClientOptions;

  constructor(
    /** http://host:port or https://host:port */
    baseUrl: string,
    options: Partial<H2ClientOptions> = {},
  ) {
    const opts: H2ClientOptions = { ...DEFAULT_CONNECTION, headers: [], ...options };
    this.opts = opts;
    const u = new URL(baseUrl);
    this.target = { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port), tls: u.protocol === 'https:' };
    this.authority = u.host;
    this.pingIntervalMs = opts.pingIntervalMs;
  }

  /** Open a stream on `path` that sends `body` (then ends its side); the handler gets the rest. */
  request(path: string, body: RequestBody, handler: H2StreamHandler): H2Stream {
    return this.open(this.headerBlock(path), body, handler);
  }

  /**
   * As request(), with headers of this call after the client's fixed set (the trace
   * context): the fixed block is the cached one and only `extra` is encoded (the encoder
   * keeps no state between blocks, so two blocks concatenate into one).
   */
  requestWithExtraHeaders(path: string, extra: readonly string[], body: RequestBody, handler: H2StreamHandler): H2Stream {
    return this.open(Buffer.concat([this.headerBlock(path), this.encoder.encode(extra)]), body, handler);
  }

  /** As request(), with this call's own headers (e.g. a deadline) instead of the client's fixed set. */
  requestWithHeaders(path: string, headers: readonly string[], body: RequestBody, handler: H2StreamHandler): H2Stream {
    const block = this.encoder.encode([
      ':method', 'POST',
      ':scheme', this.target.tls ? 'https' : 'http',
      ':path', path,
      ':authority', this.authority,
      ...headers,
    ]);
    return this.open(block, body, handler);
  }

  private open(block: Buffer, body: RequestBody, handler: H2StreamHandler): H2Stream {
    const s = new H2Stream(block, body, handler);
    if (this.closedWith) {
      s.closed = true;
      const err = this.closedWith;
      queueMicrotask(() => handler.onClose(err));
      return s;
    }
    this.place(s);
    return s;
  }

  /** Close every connection; open and later streams fail with `err`. */
  close(err: ConnectError): void {
    this.closedWith = err;
    const all = [...this.draining];
    if (this.session) all.push(this.session);
    this.session = undefined;
    for (const s of all) s.destroy(err);
  }

  /** The open streams on every connection (tests, metrics). */
  get streamCount(): number {
    let n = this.session?.streamCount ?? 0;
    for (const s of this.draining) n += s.streamCount;
    return n;
  }

  /** Connections this client holds now (tests). */
  get connectionCount(): number {
    return (this.session ? 1 : 0) + this.draining.size;
  }

  private headerBlock(path: string): Buffer {
    let b = this.blocks.get(path);
    if (!b) {
      b = this.encoder.encode([
        ':method', 'POST',
        ':scheme', this.target.tls ? 'https' : 'http',
        ':path', path,
        ':authority', this.authority,
        ...this.opts.headers,
      ]);
      this.blocks.set(path, b);
    }
    return b;
  }

  private place(s: H2Stream): void {
    let ses = this.session;
    if (!ses || !ses.usable) {
      ses = new H2Session(this.target, this, this.opts.connectTimeoutMs);
      this.session = ses;
      this.timers.set(ses, { keepAlive: undefined, pingDeadline: undefined, idle: undefined, idleSince: 0 });
    } else {
      const t = this.timers.get(ses)!;
      // Idle for longer than the PING interval: make sure the worker is still there first.
      if (ses.streamCount === 0 && t.idleSince > 0 && !ses.isVerifying && Date.now() - t.idleSince > this.pingIntervalMs) {
        this.verify(ses, t);
      }
    }
    ses.open(s);
  }

  private verify(ses: H2Session, t: SessionTimers): void {
    t.pingDeadline = setTimeout(() => {
      // No answer: this connection is gone; its held streams go to a new one.
      ses.drain(0, 'PING timed out');
      ses.destroy(new ConnectError('PING timed out', Code.Unavailable));
    }, this.opts.pingTimeoutMs);
    t.pingDeadline.unref();
    ses.verify(() => {
      clearTimeout(t.pingDeadline);
      t.pingDeadline = undefined;
      t.idleSince = Date.now();
    });
  }

  // ---- SessionEvents ----

  onDraining(ses: H2Session, code: number, debug: string): void {
    if (this.session === ses) this.session = undefined;
    if (ses.streamCount > 0) this.draining.add(ses);
    // gRPC keep-alive (A8): a worker that finds our PINGs too frequent says so; back off.
    if (code === ENHANCE_YOUR_CALM && debug === 'too_many_pings') this.pingIntervalMs *= 2;
  }

  onReplace(_ses: H2Session, streams: H2Stream[]): void {
    for (const s of streams) {
      if (this.closedWith) {
        s.closed = true;
        s.handler.onClose(this.closedWith);
      } else this.place(s);
    }
  }

  onClosed(ses: H2Session): void {
    if (this.session === ses) this.session = undefined;
    this.draining.delete(ses);
    const t = this.timers.get(ses);
    if (t) {
      clearTimeout(t.keepAlive);
      clearTimeout(t.pingDeadline);
      clearTimeout(t.idle);
      this.timers.delete(ses);
    }
  }

  // Both timers are lazy: a stream count going 0 -> 1 -> 0 (every lone request) arms and clears
  // nothing once they are armed. The keep-alive timer left armed while idle finds no stream when
  // it fires and stops; the idle timer left armed while active finds the connection busy and
  // stops, or idle for less than the limit and waits out the rest. (A timer armed and cleared
  // per request made and dropped one of Node's timer lists each time.)
  onActive(ses: H2Session, active: boolean): void {
    const t = this.timers.get(ses);
    if (!t) return;
    ses.refSocket(active);
    if (active) {
      t.idleSince = 0;
      // (Not while a keep-alive PING is out: its answer re-arms. Arming here too ran two timers,
      // two PINGs overlapped, and the deadline of the one overwritten failed the connection.)
      if (!t.keepAlive && !t.pingDeadline && Number.isFinite(this.pingIntervalMs)) this.armKeepAlive(ses, t);
      return;
    }
    t.idleSince = Date.now();
    if (!t.idle) this.armIdle(ses, t, this.opts.idleConnectionTimeoutMs);
  }

  /** Close the connection once it has had no stream for idleConnectionTimeoutMs. */
  private armIdle(ses: H2Session, t: SessionTimers, ms: number): void {
    t.idle = setTimeout(() => {
      t.idle = undefined;
      if (ses.streamCount > 0 || t.idleSince === 0) return; // busy: its next idle spell arms again
      const left = t.idleSince + this.opts.idleConnectionTimeoutMs - Date.now();
      if (left > 0) this.armIdle(ses, t, left);
      else ses.close(new ConnectError('idle connection closed', Code.Canceled));
    }, ms);
    t.idle.unref();
  }

  /**
   * Every PING interval with streams open: if nothing was read since the last look, send a
   * PING, and close the connection (failing its streams) if it is not answered in time.
   */
  private armKeepAlive(ses: H2Session, t: SessionTimers): void {
    ses.readSince = false;
    t.keepAlive = setTimeout(() => {
      t.keepAlive = undefined;
      if (ses.streamCount === 0) return;
      if (ses.readSince) {
        this.armKeepAlive(ses, t);
        return;
      }
      t.pingDeadline = setTimeout(() => ses.destroy(new ConnectError('PING timed out', Code.Unavailable)), this.opts.pingTimeoutMs);
      t.pingDeadline.unref();
      ses.ping(() => {
        clearTimeout(t.pingDeadline);
        t.pingDeadline = undefined;
        // (Not if onActive armed it again meanwhile: one keep-alive timer per connection.)
        if (ses.streamCount > 0 && !t.keepAlive) this.armKeepAlive(ses, t);
      });
    }, this.pingIntervalMs);
    t.keepAlive.unref();
  }
}

interface SessionTimers {
  keepAlive: ReturnType<typeof setTimeout> | undefined;
  pingDeadline: ReturnType<typeof setTimeout> | undefined;
  idle: ReturnType<typeof setTimeout> | undefined;
  idleSince: number;
}
