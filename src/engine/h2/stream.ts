// One request stream on an HTTP/2 connection to a worker: what its owner is told (the
// handler), its flow-control and lifecycle state (kept by the session that carries it), and
// what the owner may do with it (pause, resume, cancel).

import { Code, ConnectError } from '@connectrpc/connect';

import * as F from './frames.js';
import type { RequestBody } from './outgoing.js';

/** Our receive window per stream: what a paused stream may leave unread. */
export const STREAM_WINDOW = 256 << 10;

/** What a stream's owner is told (all from the socket's data callback or a close). */
export interface H2StreamHandler {
  /** The response headers (with `endStream`: a trailers-only response). Flat [name, value, ...]. */
  onHeaders(fields: string[], endStream: boolean): void;
  /** The trailers: a header block after the response headers (it ends the stream). */
  onTrailers(fields: string[]): void;
  /** Payload bytes of one DATA frame, `buf[start, end)`, valid only during the call. */
  onData(buf: Buffer, start: number, end: number): void;
  /** The stream is over: `err` undefined when the worker ended it (its status is in the trailers); else why it failed. Called once. */
  onClose(err: ConnectError | undefined): void;
}

/** What a stream needs of the connection carrying it (H2Session). */
export interface StreamOwner {
  ack(s: H2Stream): void;
  reset(s: H2Stream, code: number, err: ConnectError): void;
}

export class H2Stream {
  /** 0 until its HEADERS are sent. */
  id = 0;
  closed = false;
  /** The RST_STREAM code the worker sent, if it reset the stream. */
  rstCode = 0;
  /** @internal */ session: StreamOwner | undefined;
  /** @internal */ sendWindow = 0;
  /** @internal */ recvUnacked = 0;
  /** @internal */ recvWindow = STREAM_WINDOW;
  /** @internal */ paused = false;
  /** @internal */ bodyOff = 0;
  /** @internal */ localEnded = false;
  /** @internal */ remoteEnded = false;
  /** @internal */ gotHeaders = false;
  /** @internal */ blocked = false;
  /** @internal */ replaced = 0;

  constructor(
    /** @internal */ readonly headerBlock: Buffer,
    /**
     * @internal The whole request body (sent up to `bodyOff`), kept until the stream closes:
     * a stream placed again (GOAWAY past it, REFUSED_STREAM) sends it again. In parts when
     * some of it is written from buffers it does not own (an image's pixel tensor).
     */
    public body: RequestBody | undefined,
    readonly handler: H2StreamHandler,
  ) {}

  /** Stop acknowledging what arrives (the worker stops once the stream's window is used). */
  pause(): void {
    this.paused = true;
  }

  /** Acknowledge what arrived while paused, and go on. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (!this.closed && this.session) this.session.ack(this);
  }

  /** RST_STREAM CANCEL (or, not sent yet, never send it). onClose is called with Canceled. */
  cancel(): void {
    if (this.closed) return;
    if (this.session) this.session.reset(this, F.CANCEL, new ConnectError('stream cancelled by the client', Code.Canceled));
    else {
      this.closed = true;
      this.handler.onClose(new ConnectError('stream cancelled by the client', Code.Canceled));
    }
  }
}
