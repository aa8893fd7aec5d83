// Request framing and the body reader: what a request's headers say about its body
// (Content-Length, Transfer-Encoding, Expect), checked strictly before a byte of the body
// is kept, and the bounded read of that body out of uWS.
//
// uWS parses the framing itself, but calls the route handler with the headers before it
// has judged them: a Content-Length it will reject (`abc`, `-1`, `2, 2`) still reaches the
// handler, and duplicate Content-Length lines with different values are accepted (the
// first wins). So Portico decides from the raw header lines (uWS hands
// every line, duplicates included) and never trusts a number it did not parse itself.
// See docs/architecture.md, "Request framing".

import type { HttpResponse } from './uws.js';

/** How a request's body is framed, or why it cannot be served. */
export type Framing = { ok: true; length: number | null } | { ok: false; status: number; code: string; message: string };

/**
 * RFC 9110 §8.6: Content-Length = 1*DIGIT; 15 digits at most keep every value an exact JS
 * number. -1 for anything else. A loop, not a RegExp test and Number(): both leave
 * optimized code for V8's runtime, once per request.
 */
function decimalOf(v: string): number {
  const len = v.length;
  if (len === 0 || len > 15) return -1;
  let n = 0;
  for (let i = 0; i < len; i++) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * Read the framing headers of a request with a body. `headers` is the flat
 * [name, value, ...] list of the request (lower-cased names, every line). The length is
 * null for a chunked body (its size is known only as it arrives).
 */
export function framingOf(headers: readonly string[], maxBody: number): Framing {
  let length = -1;
  let te: string | null = null;
  let expect: string | null = null;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i];
    if (name === 'content-length') {
      // A line may hold a list ("5, 5"); every element of every line must be the same number.
      const value = headers[i + 1]!;
      for (let from = 0; ; ) {
        const comma = value.indexOf(',', from);
        const n = decimalOf((comma < 0 ? value.slice(from) : value.slice(from, comma)).trim());
        if (n < 0) return bad(400, 'invalid_content_length', `invalid Content-Length header: ${JSON.stringify(value.slice(0, 40))} (expected one decimal number of bytes)`);
        if (length >= 0 && n !== length) return bad(400, 'invalid_content_length', 'conflicting Content-Length headers');
        length = n;
        if (comma < 0) break;
        from = comma + 1;
      }
    } else if (name === 'transfer-encoding') {
      te = te === null ? headers[i + 1]! : `${te},${headers[i + 1]!}`;
    } else if (name === 'expect') {
      expect = headers[i + 1]!;
    }
  }
  if (te !== null) {
    // RFC 9112 §6.1: a message with both may be an attempt at request smuggling; reject it.
    if (length >= 0) return bad(400, 'invalid_framing', 'a request must not carry both Content-Length and Transfer-Encoding');
    const codings = te.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '');
    // RFC 9112 §6.3: chunked must be the final coding, or the length cannot be determined.
    if (codings[codings.length - 1] !== 'chunked') return bad(400, 'invalid_framing', 'Transfer-Encoding must end with chunked');
    const other = codings.find((c) => c !== 'chunked');
    if (other !== undefined) return bad(501, 'unsupported_transfer_encoding', `transfer coding ${JSON.stringify(other)} is not supported (only chunked)`);
    if (codings.length > 1) return bad(400, 'invalid_framing', 'chunked must not be applied more than once');
  }
  // RFC 9110 §10.1.1: an expectation other than 100-continue cannot be met.
  if (expect !== null && expect.trim().toLowerCase() !== '100-continue') return bad(417, 'expectation_failed', `expectation ${JSON.stringify(expect.slice(0, 40))} is not supported (only 100-continue)`);
  if (length > maxBody) return bad(413, 'payload_too_large', `request body is larger than the limit of ${maxBody} bytes`);
  return { ok: true, length: te !== null ? null : Math.max(length, 0) };
}

function bad(status: number, code: string, message: string): Framing {
  return { ok: false, status, code, message };
}

/** What the reader reports: the whole body, or that it grew past the limit. */
export interface BodySink {
  /** True once the exchange is over (answered or gone): the reader then drops data. */
  readonly done: boolean;
  body(body: Buffer): void;
  /** The body grew past the limit: answer now (the reader then drops the rest). */
  tooLarge(): void;
  /** The rest of a refused body has been dropped (`cut`: or more than the server drops): the answer may end. */
  dropped(cut: boolean): void;
  /** Something threw while taking the data: answered as a 500 by the sink. */
  failed(err: unknown): void;
}

/**
 * Collect a request body from uWS's onData: preallocated when the length is declared,
 * grown as data comes when it is chunked, never past `maxBody`.
 */
export function readBody(res: HttpResponse, length: number | null, maxBody: number, sink: BodySink): void {
  let buf = length === null ? EMPTY : Buffer.allocUnsafe(length);
  let len = 0;
  let dropping = false;
  let dropped = 0;
  res.onData((chunk, isLast) => {
    try {
      const n = chunk.byteLength;
      if (dropping) {
        dropped += n;
        if (isLast || dropped > DROP_LIMIT) {
          dropping = false;
          sink.dropped(!isLast);
        }
        return;
      }
      if (sink.done) return;
      if (len + n > maxBody) {
        buf = EMPTY;
        dropping = !isLast;
        sink.tooLarge();
        if (isLast) sink.dropped(false);
        return;
      }
      if (len + n > buf.length) {
        const grown = Buffer.allocUnsafe(Math.min(maxBody, Math.max(len + n, buf.length * 2, 1024)));
        buf.copy(grown, 0, 0, len);
        buf = grown;
      }
      // uWS reuses the chunk's memory after this callback: copy it out now.
      buf.set(new Uint8Array(chunk), len);
      len += n;
      if (isLast) sink.body(len === buf.length ? buf : buf.subarray(0, len));
    } catch (err) {
      sink.failed(err);
    }
  });
}

/**
 * Drop a body the server has already refused (413 sent): read and discard it so that
 * the client, which is still sending, can read the answer, then let the answer end.
 */
export function dropBody(res: HttpResponse, sink: Pick<BodySink, 'dropped' | 'failed'>): void {
  let dropped = 0;
  let over = false;
  res.onData((chunk, isLast) => {
    if (over) return;
    try {
      dropped += chunk.byteLength;
      if (isLast || dropped > DROP_LIMIT) {
        over = true;
        sink.dropped(!isLast);
      }
    } catch (err) {
      sink.failed(err);
    }
  });
}

/**
 * How much of a refused body is read and dropped before the connection is closed
 * anyway (a client still sending past it may then see its write fail). nginx bounds
 * the same lingering read by time (lingering_time 30 s); uWS closes a connection idle
 * for 10 s, so a client that stops sending is bounded by that.
 */
const DROP_LIMIT = 256 * 1024 * 1024;

const EMPTY = Buffer.alloc(0);
