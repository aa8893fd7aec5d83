// HTTP/2 frame layout (RFC 9113 §4, §6): the numbers the engine client's session uses, and
// the few control frames it writes. Every frame is a 9-byte header (24-bit payload length,
// type, flags, reserved bit + 31-bit stream id) and its payload.

export const FRAME_HEADER = 9;

export const DATA = 0x0;
export const HEADERS = 0x1;
export const PRIORITY = 0x2;
export const RST_STREAM = 0x3;
export const SETTINGS = 0x4;
export const PUSH_PROMISE = 0x5;
export const PING = 0x6;
export const GOAWAY = 0x7;
export const WINDOW_UPDATE = 0x8;
export const CONTINUATION = 0x9;

export const FLAG_END_STREAM = 0x1;
export const FLAG_ACK = 0x1;
export const FLAG_END_HEADERS = 0x4;
export const FLAG_PADDED = 0x8;
export const FLAG_PRIORITY = 0x20;

export const SETTINGS_HEADER_TABLE_SIZE = 0x1;
export const SETTINGS_ENABLE_PUSH = 0x2;
export const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
export const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
export const SETTINGS_MAX_FRAME_SIZE = 0x5;
export const SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

// Error codes (RFC 9113 §7).
export const NO_ERROR = 0x0;
export const PROTOCOL_ERROR = 0x1;
export const INTERNAL_ERROR = 0x2;
export const FLOW_CONTROL_ERROR = 0x3;
export const STREAM_CLOSED = 0x5;
export const FRAME_SIZE_ERROR = 0x6;
export const REFUSED_STREAM = 0x7;
export const CANCEL = 0x8;
export const COMPRESSION_ERROR = 0x9;
export const ENHANCE_YOUR_CALM = 0xb;

/** The default (and minimum) SETTINGS_MAX_FRAME_SIZE, and the default initial window. */
export const DEFAULT_MAX_FRAME = 16_384;
export const DEFAULT_WINDOW = 65_535;
/** The largest flow-control window (2^31 - 1). */
export const MAX_WINDOW = 0x7fff_ffff;

export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export function writeFrameHeader(out: Buffer, off: number, length: number, type: number, flags: number, streamId: number): void {
  out[off] = (length >>> 16) & 0xff;
  out[off + 1] = (length >>> 8) & 0xff;
  out[off + 2] = length & 0xff;
  out[off + 3] = type;
  out[off + 4] = flags;
  out.writeUInt32BE(streamId & MAX_WINDOW, off + 5);
}

/** A whole frame: header + a copy of `payload`. */
export function frame(type: number, flags: number, streamId: number, payload?: Uint8Array): Buffer {
  const len = payload?.length ?? 0;
  const out = Buffer.allocUnsafe(FRAME_HEADER + len);
  writeFrameHeader(out, 0, len, type, flags, streamId);
  if (payload) out.set(payload, FRAME_HEADER);
  return out;
}

/** SETTINGS with the given [id, value] pairs. */
export function settingsFrame(pairs: ReadonlyArray<readonly [number, number]>): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER + 6 * pairs.length);
  writeFrameHeader(out, 0, 6 * pairs.length, SETTINGS, 0, 0);
  let o = FRAME_HEADER;
  for (const [id, v] of pairs) {
    out.writeUInt16BE(id, o);
    out.writeUInt32BE(v >>> 0, o + 2);
    o += 6;
  }
  return out;
}

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER + 4);
  writeFrameHeader(out, 0, 4, WINDOW_UPDATE, 0, streamId);
  out.writeUInt32BE(increment & MAX_WINDOW, FRAME_HEADER);
  return out;
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER + 4);
  writeFrameHeader(out, 0, 4, RST_STREAM, 0, streamId);
  out.writeUInt32BE(code >>> 0, FRAME_HEADER);
  return out;
}

export function goawayFrame(lastStreamId: number, code: number, debug = ''): Buffer {
  const d = Buffer.from(debug.slice(0, 256), 'utf8');
  const out = Buffer.allocUnsafe(FRAME_HEADER + 8 + d.length);
  writeFrameHeader(out, 0, 8 + d.length, GOAWAY, 0, 0);
  out.writeUInt32BE(lastStreamId & MAX_WINDOW, FRAME_HEADER);
  out.writeUInt32BE(code >>> 0, FRAME_HEADER + 4);
  d.copy(out, FRAME_HEADER + 8);
  return out;
}

export function pingFrame(payload: Uint8Array, ack: boolean): Buffer {
  return frame(PING, ack ? FLAG_ACK : 0, 0, payload);
}
