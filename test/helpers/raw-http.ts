// HTTP/1.1 over a raw `node:net` socket, for the framing tests: send exact bytes (bad
// Content-Length, pipelined requests, bare LF) and read back exactly what the server
// wrote: complete responses, parsed, and whether the connection closed.

import net from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The header names in the order sent, lower-cased (to check for duplicates). */
  headerNames: string[];
  body: string;
  /** A chunked body's chunks, in order (each as the server wrote it); absent otherwise. */
  chunks?: string[];
}

export interface RawResult {
  /** Final (non-1xx) responses, in order. */
  responses: RawResponse[];
  /** Interim 1xx responses seen (e.g. 100 Continue). */
  interim: number[];
  /** True when the server closed the connection (before `want` responses, or after). */
  closed: boolean;
  /** Every byte the server sent, as text. */
  raw: string;
}

export interface RawOptions {
  /** Resolve once this many final responses are complete (default 1); the socket is then closed by us. */
  want?: number;
  /** Called on each 1xx response; may write more bytes (e.g. a body after 100 Continue). */
  onInterim?: (status: number, sock: net.Socket) => void;
  /** Hang guard only: reject when nothing decisive happened by then. */
  timeoutMs?: number;
  /** Called once the socket is connected and the bytes are written. */
  onSent?: (sock: net.Socket) => void;
  /** The first `heads` requests sent are HEADs: their responses have no body whatever their Content-Length. */
  heads?: number;
  /** After the responses, wait for the server to close the connection (to assert that it does). */
  untilClose?: boolean;
}

/** Send `bytes` on a new connection; resolve with the responses once `want` are complete or the server closes. */
export function rawExchange(port: number, bytes: string | Buffer, opts: RawOptions = {}): Promise<RawResult> {
  const want = opts.want ?? 1;
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const result: RawResult = { responses: [], interim: [], closed: false, raw: '' };
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      result.closed = closed;
      sock.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      sock.destroy();
      reject(new Error(`no answer and no close within ${opts.timeoutMs ?? 30_000} ms; got ${JSON.stringify(result.raw.slice(0, 300))}`));
    }, opts.timeoutMs ?? 30_000);
    sock.on('error', () => {
      /* a reset is a close; reported by 'close' */
    });
    sock.on('close', () => finish(true));
    sock.on('data', (d: Buffer) => {
      result.raw += d.toString('latin1');
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const parsed = parseOne(buf, result.responses.length < (opts.heads ?? 0));
        if (!parsed) break;
        buf = buf.subarray(parsed.used);
        if (parsed.response.status < 200) {
          result.interim.push(parsed.response.status);
          opts.onInterim?.(parsed.response.status, sock);
          continue;
        }
        result.responses.push(parsed.response);
        if (result.responses.length >= want && !opts.untilClose) {
          finish(false);
          return;
        }
      }
    });
    sock.write(bytes, () => opts.onSent?.(sock));
  });
}

/** Wait until the server closes `sock` (hang guard: `timeoutMs`). */
export function closed(sock: net.Socket, timeoutMs = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    if (sock.destroyed) return resolve();
    const t = setTimeout(() => reject(new Error('connection not closed in time')), timeoutMs);
    sock.once('close', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

function parseOne(buf: Buffer, head: boolean): { response: RawResponse; used: number } | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1] ?? NaN);
  if (!Number.isFinite(status)) throw new Error(`not an HTTP response: ${JSON.stringify(lines[0])}`);
  const headers: Record<string, string> = {};
  const headerNames: string[] = [];
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headerNames.push(name);
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  let at = end + 4;
  if (status < 200 || status === 204 || status === 304 || head) return { response: { status, headers, headerNames, body: '' }, used: at };
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const chunks: string[] = [];
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return null;
      const size = parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
      if (buf.length < lineEnd + 2 + size + 2) return null;
      if (size > 0) chunks.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size).toString('utf8'));
      at = lineEnd + 2 + size + 2;
      if (size === 0) return { response: { status, headers, headerNames, body: chunks.join(''), chunks }, used: at };
    }
  }
  const length = Number(headers['content-length'] ?? 0);
  if (buf.length < at + length) return null;
  return { response: { status, headers, headerNames, body: buf.subarray(at, at + length).toString('utf8') }, used: at + length };
}
