// A minimal HTTP/1.1 client over one raw keep-alive socket: it writes the request bytes
// exactly as given (so the fuzzer controls every header byte) and reads one response
// (Content-Length, chunked, or to the close). Node's fetch normalises or refuses the
// malformed headers a fuzzer wants to send, and its pool hides which socket was closed.

import net from 'node:net';

export interface Reply {
  status: number;
  /** Lower-cased header names. */
  headers: Map<string, string[]>;
  body: Buffer;
  /** The server closed the connection after this response. */
  closed: boolean;
}

export type Outcome = { kind: 'reply'; reply: Reply } | { kind: 'timeout' } | { kind: 'closed'; partial: string; reused?: boolean } | { kind: 'malformed'; why: string; head: string };

export function rawRequest(path: string, headers: [string, string][], body: Buffer): Buffer {
  let head = `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n`;
  for (const [k, v] of headers) head += `${k}: ${v}\r\n`;
  head += `content-length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

type Parsed = { done: false } | { done: true; reply: Omit<Reply, 'closed'>; used: number } | { done: true; error: string };

function parse(buf: Buffer, eof: boolean): Parsed {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return { done: false };
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0]);
  if (!m) return { done: true, error: `bad status line ${JSON.stringify(lines[0])}` };
  const headers = new Map<string, string[]>();
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i <= 0) return { done: true, error: `bad header line ${JSON.stringify(l)}` };
    const k = l.slice(0, i).trim().toLowerCase();
    headers.set(k, [...(headers.get(k) ?? []), l.slice(i + 1).trim()]);
  }
  const status = Number(m[1]);
  const start = end + 4;
  const te = headers.get('transfer-encoding')?.join(',').toLowerCase();
  const cl = headers.get('content-length');
  if (te === 'chunked') {
    const parts: Buffer[] = [];
    let at = start;
    for (;;) {
      const nl = buf.indexOf('\r\n', at);
      if (nl < 0) return eof ? { done: true, error: 'stream closed inside a chunk size' } : { done: false };
      const size = parseInt(buf.subarray(at, nl).toString('latin1'), 16);
      if (!Number.isFinite(size) || size < 0) return { done: true, error: 'bad chunk size' };
      if (buf.length < nl + 2 + size + 2) return eof ? { done: true, error: 'stream closed inside a chunk (not terminated)' } : { done: false };
      if (size === 0) return { done: true, reply: { status, headers, body: Buffer.concat(parts) }, used: nl + 4 };
      parts.push(buf.subarray(nl + 2, nl + 2 + size));
      at = nl + 2 + size + 2;
    }
  }
  if (cl) {
    if (cl.length !== 1 || !/^\d+$/.test(cl[0])) return { done: true, error: `bad content-length ${JSON.stringify(cl)}` };
    const n = Number(cl[0]);
    if (buf.length < start + n) return eof ? { done: true, error: 'closed before the whole body' } : { done: false };
    return { done: true, reply: { status, headers, body: buf.subarray(start, start + n) }, used: start + n };
  }
  if (status === 204 || status === 304) return { done: true, reply: { status, headers, body: Buffer.alloc(0) }, used: start };
  if (!eof) return { done: false };
  return { done: true, reply: { status, headers, body: buf.subarray(start) }, used: buf.length };
}

export class Connection {
  private sock: net.Socket | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private eof = false;
  private wake: (() => void) | null = null;
  /** Requests answered on the current socket (a close before any byte of a later one is a keep-alive race or a silent close). */
  uses = 0;
  /** When the last answer on this socket ended (ms since epoch). */
  lastAnswerAt = 0;

  constructor(private readonly port: number) {}

  private async open(): Promise<net.Socket> {
    const s = net.connect({ port: this.port, host: '127.0.0.1', noDelay: true });
    this.buf = Buffer.alloc(0);
    this.eof = false;
    this.uses = 0;
    // a destroyed earlier socket still emits close/end later: only this socket's events count
    s.on('data', (d: Buffer) => {
      if (this.sock !== s) return;
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.wake?.();
    });
    const onEnd = () => {
      if (this.sock !== s) return;
      this.eof = true;
      this.wake?.();
    };
    s.on('end', onEnd);
    s.on('close', onEnd);
    s.on('error', onEnd);
    this.sock = s;
    await new Promise<void>((resolve, reject) => {
      s.once('connect', resolve);
      s.once('error', reject);
    });
    return s;
  }

  close(): void {
    this.sock?.destroy();
    this.sock = null;
  }

  /** Sends `raw` and reads one response; a timeout or a close resets the connection. */
  async send(raw: Buffer, timeoutMs: number): Promise<Outcome> {
    if (!this.sock || this.eof || this.sock.destroyed) {
      this.close();
      await this.open();
    }
    const s = this.sock!;
    s.write(raw);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.wake?.();
    }, timeoutMs);
    try {
      for (;;) {
        const p = parse(this.buf, this.eof);
        if (p.done) {
          if ('error' in p) {
            const head = this.buf.subarray(0, 300).toString('latin1');
            this.close();
            return this.buf.length === 0 ? { kind: 'closed', partial: '' } : { kind: 'malformed', why: p.error, head };
          }
          this.buf = this.buf.subarray(p.used);
          const closed = this.eof || (p.reply.headers.get('connection') ?? []).some((v) => v.toLowerCase() === 'close');
          this.uses++;
          this.lastAnswerAt = Date.now();
          if (closed) this.close();
          return { kind: 'reply', reply: { ...p.reply, closed } };
        }
        if (this.eof) {
          const partial = this.buf.toString('latin1').slice(0, 300);
          const reused = this.uses > 0;
          this.close();
          return { kind: 'closed', partial, reused };
        }
        if (timedOut) {
          this.close();
          return { kind: 'timeout' };
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
      }
    } finally {
      clearTimeout(timer);
    }
  }
}
