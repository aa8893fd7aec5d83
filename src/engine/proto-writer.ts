// A minimal protobuf wire writer for the one message whose encoding cost
// matters: GenerateRequest, once per request. protobuf-es's create() +
// toBinary() walk reflective descriptors and allocate a message object per
// nested message; the hand-written encoders (sglang-generate-wire.ts,
// vllm-generate-wire.ts) call this writer directly instead. It writes into
// one scratch buffer reused across calls (encoding is synchronous) and
// returns a fresh Buffer holding the gRPC length-prefixed frame.
//
// Kept over @bufbuild/protobuf/wire's BinaryWriter on a same-run A/B
// (bench/proto-writer-ab.bench.ts, the same bytes from both): BinaryWriter took 2.4-2.9
// times the CPU per request (0.92 against 2.49 µs; bench/RESULTS.md, "One request path"), far
// above the run-to-run noise; it allocates a chunk array per fork and a new buffer per
// finish, this writes into one reused scratch buffer.
//
// Values are checked as protobuf-es checks them (an int32 that is not an
// integer in range throws), so a bad value fails the same way it did.

const GRPC_PREFIX = 5;
const INITIAL = 4096;
const MAX_KEPT = 1 << 20;

const f32 = new Float32Array(1);
const f32Bytes = new Uint8Array(f32.buffer);

export const WIRE_VARINT = 0;
export const WIRE_LEN = 2;
export const WIRE_FIXED32 = 5;

/** Bytes of a uint32 varint. */
export function varintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/**
 * The value came from the client (the readers in src/protocol check every integer's range when
 * they read it, so this is only a backstop): `apiStatus` makes ApiError.from answer a 400 rather
 * than a 500 "internal error". The message is protobuf-es's, word for word.
 */
function invalid(kind: string, field: string, v: unknown): Error {
  return Object.assign(new Error(`cannot encode field ${field} to binary: invalid ${kind}: ${String(v)}`), { apiStatus: 400 });
}

export class ProtoWriter {
  private buf = Buffer.allocUnsafe(INITIAL);
  private pos = GRPC_PREFIX;
  private readonly forks: number[] = [];
  /** Bytes that belong at scratch position `at` but are not copied into it (external()). */
  private ext: { at: number; data: Uint8Array }[] = [];
  private extBytes = 0;

  /** Start a new message (after room for the gRPC prefix). */
  begin(): this {
    this.pos = GRPC_PREFIX;
    if (this.forks.length !== 0) this.forks.length = 0; // (a runtime call: only after a message left unbalanced)
    if (this.ext.length > 0) {
      this.ext = [];
      this.extBytes = 0;
    }
    return this;
  }

  /**
   * `data` as the next bytes of the message without copying it (an image's pixel tensor:
   * megabytes the processor already holds); its length prefix is already written. Only at
   * the top level of the message or inside lengths written ahead (no open fork, whose
   * length is measured in the scratch buffer).
   */
  external(data: Uint8Array): this {
    if (this.forks.length > 0) throw new Error('external bytes inside an open fork');
    this.ext.push({ at: this.pos, data });
    this.extBytes += data.length;
    return this;
  }

  /**
   * The message as one gRPC frame in parts: the scratch bytes around each external piece
   * copied, the pieces themselves not (finishFrame when there are none).
   */
  finishFrameParts(): Buffer | Buffer[] {
    if (this.ext.length === 0) return this.finishFrame();
    const parts: Buffer[] = [];
    this.buf[0] = 0;
    this.buf.writeUInt32BE(this.pos - GRPC_PREFIX + this.extBytes, 1);
    let from = 0;
    for (const e of this.ext) {
      parts.push(Buffer.from(this.buf.subarray(from, e.at)));
      parts.push(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data.buffer, e.data.byteOffset, e.data.length));
      from = e.at;
    }
    parts.push(Buffer.from(this.buf.subarray(from, this.pos)));
    this.ext = [];
    this.extBytes = 0;
    if (this.buf.length > MAX_KEPT) this.buf = Buffer.allocUnsafe(INITIAL);
    return parts;
  }

  /** The message written since begin(), as one gRPC frame (flag 0, length, bytes), in a new Buffer. */
  finishFrame(): Buffer {
    if (this.ext.length > 0) {
      const parts = this.finishFrameParts() as Buffer[];
      return Buffer.concat(parts);
    }
    const len = this.pos - GRPC_PREFIX;
    // A long prompt or an image grew the scratch buffer past what is kept: hand it over as
    // the frame (no copy of megabytes) and start a small one.
    if (this.buf.length > MAX_KEPT) {
      const out = this.buf.subarray(0, this.pos);
      this.buf = Buffer.allocUnsafe(INITIAL);
      out[0] = 0;
      out.writeUInt32BE(len, 1);
      return out;
    }
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, GRPC_PREFIX, GRPC_PREFIX, this.pos);
    out[0] = 0;
    out.writeUInt32BE(len, 1);
    return out;
  }


  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** A varint known to be a uint32 (tags, lengths, values already checked). */
  private varint(v: number): void {
    this.ensure(5);
    const b = this.buf;
    while (v > 0x7f) {
      b[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[this.pos++] = v;
  }

  tag(field: number, wire: number): this {
    this.varint(((field << 3) | wire) >>> 0);
    return this;
  }

  uint32(v: number, field: string): this {
    if (typeof v !== 'number' || (v >>> 0) !== v) throw invalid('uint32', field, v);
    this.varint(v);
    return this;
  }

  int32(v: number, field: string): this {
    if (typeof v !== 'number' || (v | 0) !== v) throw invalid('int32', field, v);
    if (v >= 0) {
      this.varint(v);
      return this;
    }
    // Negative: sign-extended to 64 bits, ten bytes.
    this.ensure(10);
    const b = this.buf;
    for (let i = 0; i < 9; i++) {
      b[this.pos++] = (v & 0x7f) | 0x80;
      v >>= 7;
    }
    b[this.pos++] = 1;
    return this;
  }

  bool(v: boolean): this {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
    return this;
  }

  float(v: number, field: string): this {
    if (typeof v !== 'number') throw invalid('float32', field, typeof v);
    // Finite but too large for a float32 (it would round to infinity).
    if (!Number.isFinite(Math.fround(v)) && Number.isFinite(v)) throw invalid('float32', field, v);
    this.ensure(4);
    f32[0] = v;
    const b = this.buf;
    b[this.pos] = f32Bytes[0]!;
    b[this.pos + 1] = f32Bytes[1]!;
    b[this.pos + 2] = f32Bytes[2]!;
    b[this.pos + 3] = f32Bytes[3]!;
    this.pos += 4;
    return this;
  }

  /** A length-prefixed UTF-8 string. */
  string(s: string): this {
    const len = s.length;
    if (len < 0x80) {
      // ASCII fast path: one length byte, one byte per char.
      this.ensure(len + 1);
      const b = this.buf;
      let p = this.pos + 1;
      let i = 0;
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        b[p++] = c;
      }
      if (i === len) {
        b[this.pos] = len;
        this.pos = p;
        return this;
      }
    }
    // A UTF-16 unit takes at most three UTF-8 bytes; guess the prefix from the ASCII length.
    this.ensure(len * 3 + 5);
    const guess = varintSize(len);
    const start = this.pos;
    const written = this.buf.write(s, start + guess, 'utf8');
    const size = varintSize(written);
    if (size !== guess) this.buf.copyWithin(start + size, start + guess, start + guess + written);
    this.varint(written);
    this.pos += written;
    return this;
  }

  /** Packed repeated uint32 (nothing when empty). */
  packedUint32(field: number, ids: ArrayLike<number>, name: string, checked = false): this {
    const n = ids.length;
    if (n === 0) return this;
    this.tag(field, WIRE_LEN).fork();
    if (checked) for (let i = 0; i < n; i++) this.varint(ids[i]!);
    else for (let i = 0; i < n; i++) this.uint32(ids[i]!, name);
    return this.join();
  }

  /** Length-prefixed bytes (a `bytes` field's body). */
  bytes(data: Uint8Array): this {
    this.varint(data.length);
    return this.raw(data);
  }

  /** Bytes copied as they are (a body whose length was already written). */
  raw(data: Uint8Array): this {
    this.ensure(data.length);
    this.buf.set(data, this.pos);
    this.pos += data.length;
    return this;
  }

  /** A length already known (written before a body built with raw()). */
  length(n: number): this {
    this.varint(n);
    return this;
  }

  /** The message written since begin(), without a gRPC prefix, in a new Buffer. */
  finishBody(): Buffer {
    const out = Buffer.from(this.buf.subarray(GRPC_PREFIX, this.pos));
    if (this.buf.length > MAX_KEPT) this.buf = Buffer.allocUnsafe(INITIAL);
    return out;
  }

  /** Open a length-delimited field's body (its tag already written); close it with join(). */
  fork(): this {
    this.ensure(1);
    this.forks.push(this.pos);
    this.pos += 1; // most bodies are < 128 bytes: a one-byte length, moved if not
    return this;
  }

  join(): this {
    const start = this.forks.pop()!;
    const len = this.pos - start - 1;
    const size = varintSize(len);
    if (size > 1) {
      this.ensure(size - 1);
      this.buf.copyWithin(start + size, start + 1, this.pos);
    }
    this.pos = start;
    this.varint(len);
    this.pos += len;
    return this;
  }
}
