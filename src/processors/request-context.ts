// The per-request context a processor's engine receives: the request's id, abort signal
// and headers, and setResponseHeader under spec 002's rules. Portico keeps the exchange's
// internals (engine request id, cancellation) beside it for the routed engine.

import type { Exchange } from '../api/exchange.js';
import type { RequestContext } from './contract.js';

/** Headers the HTTP layer owns: framing, the request id, and hop-by-hop ones (RFC 9110 §7.6.1). */
const OWNED = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'x-request-id',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** RFC 9110 token characters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Field value: visible ASCII, obs-text, space and tab; no leading or trailing whitespace. */
const VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\x20\x09\x21-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;

export type Endpoint = RequestContext['endpoint'];

export class ProcessorContext implements RequestContext {
  /** Set once the response head is out (or can never carry headers). */
  private committed: boolean;
  /** Sub-requests sent through the routed engine, for their engine request ids. */
  private routed = 0;

  constructor(
    readonly ex: Exchange,
    readonly endpoint: Endpoint,
    /** Whether this response can carry processor headers at all (spec 002 "Response headers"). */
    carriesHeaders: boolean,
  ) {
    this.committed = !carriesHeaders;
  }

  get id(): string {
    return this.ex.requestId;
  }

  get signal(): AbortSignal {
    return this.ex.signal;
  }

  header(name: string): string {
    return this.ex.header(name.toLowerCase());
  }

  setResponseHeader(name: string, value: string): boolean {
    if (this.committed || !this.ex.addResponseHeader) return false;
    if (typeof name !== 'string' || !TOKEN.test(name)) throw new TypeError(`invalid header name: ${JSON.stringify(name)}`);
    if (typeof value !== 'string' || !VALUE.test(value)) throw new TypeError(`invalid value for header ${name}: ${JSON.stringify(value)}`);
    const lower = name.toLowerCase();
    if (OWNED.has(lower)) throw new TypeError(`the ${lower} header is set by Portico's HTTP layer; a processor cannot set it`);
    this.ex.addResponseHeader(lower, value);
    return true;
  }

  /** The response head went out: later calls return false. */
  commit(): void {
    this.committed = true;
  }

  /** A unique engine request id for the k-th routed sub-request of this request. */
  nextEngineRequestId(): string {
    const k = this.routed++;
    return k === 0 ? this.ex.engineRequestId : `${this.ex.engineRequestId}-${k}`;
  }
}
