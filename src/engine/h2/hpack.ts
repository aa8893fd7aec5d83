// HPACK (RFC 7541) for the client side of HTTP/2: a full decoder for the header blocks the
// server sends, and a table-free encoder for the requests we send.
//
// The encoder never inserts into the dynamic table (it only emits indexed static fields and
// literals without indexing), so our side has no encoder state to keep in sync and the peer's
// SETTINGS_HEADER_TABLE_SIZE does not matter to it. The decoder keeps the dynamic table the
// server's encoder drives, bounded by the SETTINGS_HEADER_TABLE_SIZE we advertise.

import { HpackError, huffmanDecode } from './huffman.js';

export { HpackError };

// Appendix A: the static table, 1-based (index 0 is never valid, §6.1).
const STATIC: readonly (readonly [string, string])[] = [
  ['', ''],
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];
const STATIC_COUNT = STATIC.length - 1; // 61
const STATIC_NAMES = STATIC.map((e) => e[0]);
const STATIC_VALUES = STATIC.map((e) => e[1]);

/** §4.1: an entry's size is its name and value lengths in octets plus 32. */
const ENTRY_OVERHEAD = 32;
/** Integers above this are rejected: nothing in a header block legitimately needs more. */
const MAX_INT = 0x7fffffff;

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function checkLimit(what: string, v: number): number {
  if (!Number.isInteger(v) || v < 0 || v > MAX_INT) throw new RangeError(`${what} must be an integer in [0, 2^31)`);
  return v;
}

export class HpackDecoder {
  /** The SETTINGS_HEADER_TABLE_SIZE we advertise: the ceiling for size updates (§6.3). */
  private readonly maxTableSize: number;
  private readonly maxHeaderListSize: number;
  /** The table's current maximum size, as last set by the encoder (§4.2). */
  private capacity: number;
  /** Sum of the entries' §4.1 sizes. */
  private size = 0;

  // Dynamic table as a ring: slot `head` holds the newest entry (dynamic index 1, i.e.
  // HPACK index 62), `head - 1` the next, and so on, modulo the power-of-two length. It grows
  // by doubling when full, so the memory follows what the peer uses, not the maximum.
  private names: string[] = new Array<string>(16).fill('');
  private values: string[] = new Array<string>(16).fill('');
  private mask = 15;
  private head = 15;
  private count = 0;

  /** Read cursor of the block being decoded. */
  private pos = 0;

  constructor(maxTableSize = 4096, maxHeaderListSize = 65536) {
    this.maxTableSize = checkLimit('maxTableSize', maxTableSize);
    this.maxHeaderListSize = checkLimit('maxHeaderListSize', maxHeaderListSize);
    // The table starts at the size we advertise: the server's first header block follows
    // our SETTINGS (they precede every request), so its encoder has already adopted it.
    this.capacity = maxTableSize;
  }

  /**
   * Decode one complete header block (a HEADERS payload plus its CONTINUATIONs, without
   * padding/priority bytes). Returns [name0, value0, name1, value1, ...] as latin1 strings.
   * Throws HpackError on malformed input; the decoder must not be used after that.
   */
  decode(block: Uint8Array, start: number, end: number): string[] {
    if (!(start >= 0 && start <= end && end <= block.length)) {
      throw new RangeError(`bad block range [${start}, ${end}) of ${block.length}`);
    }
    const buf = asBuffer(block);
    const out: string[] = [];
    let listSize = 0;
    let fieldSeen = false;
    this.pos = start;
    while (this.pos < end) {
      const b = buf[this.pos]!;
      let name: string;
      let value: string;
      if (b & 0x80) {
        // §6.1 indexed field: 1xxxxxxx, 7-bit index.
        const index = this.integer(buf, end, 0x7f);
        if (index === 0) throw new HpackError('index 0');
        if (index <= STATIC_COUNT) {
          name = STATIC_NAMES[index]!;
          value = STATIC_VALUES[index]!;
        } else {
          const slot = this.slot(index);
          name = this.names[slot]!;
          value = this.values[slot]!;
        }
      } else if (b & 0x40) {
        // §6.2.1 literal with incremental indexing: 01xxxxxx, 6-bit name index (0 = literal name).
        const index = this.integer(buf, end, 0x3f);
        name = index === 0 ? this.string(buf, end) : this.nameAt(index);
        value = this.string(buf, end);
        this.insert(name, value);
      } else if (b & 0x20) {
        // §6.3 dynamic table size update: 001xxxxx, 5-bit size. §4.2: it MUST come at the
        // beginning of a header block (several may, e.g. a decrease then an increase).
        if (fieldSeen) throw new HpackError('dynamic table size update after a header field');
        const size = this.integer(buf, end, 0x1f);
        if (size > this.maxTableSize) {
          throw new HpackError(
            `dynamic table size update ${size} above SETTINGS_HEADER_TABLE_SIZE ${this.maxTableSize}`,
          );
        }
        this.capacity = size;
        this.evictTo(size);
        continue;
      } else {
        // §6.2.2 literal without indexing (0000xxxx) and §6.2.3 never indexed (0001xxxx):
        // 4-bit name index. Neither touches the table, so for a decoder they are the same.
        const index = this.integer(buf, end, 0x0f);
        name = index === 0 ? this.string(buf, end) : this.nameAt(index);
        value = this.string(buf, end);
      }
      fieldSeen = true;
      // RFC 7540 §6.5.2: the header list size counts each field as name + value + 32 octets.
      listSize += name.length + value.length + ENTRY_OVERHEAD;
      if (listSize > this.maxHeaderListSize) {
        throw new HpackError(`header list larger than ${this.maxHeaderListSize} octets`);
      }
      out.push(name, value);
    }
    return out;
  }

  /** §5.1 integer with an N-bit prefix (mask = 2^N - 1) at this.pos, which is < end. */
  private integer(buf: Buffer, end: number, mask: number): number {
    let pos = this.pos;
    let v = buf[pos++]! & mask;
    if (v === mask) {
      // Continuation octets: 7 bits each, least significant group first, high bit = more.
      // 2^31 - 1 needs at most 5 of them; a 6th is rejected even if it only adds zeros.
      for (let shift = 0; ; shift += 7) {
        if (shift > 28) throw new HpackError('integer encoding too long');
        if (pos >= end) throw new HpackError('truncated integer');
        const c = buf[pos++]!;
        v += (c & 0x7f) * 2 ** shift;
        if (v > MAX_INT) throw new HpackError('integer overflow');
        if ((c & 0x80) === 0) break;
      }
    }
    this.pos = pos;
    return v;
  }

  /** §5.2 string literal: H bit, 7-bit-prefix length, then that many octets. */
  private string(buf: Buffer, end: number): string {
    if (this.pos >= end) throw new HpackError('truncated header block: string literal expected');
    const huffman = buf[this.pos]! & 0x80;
    const len = this.integer(buf, end, 0x7f);
    const s = this.pos;
    if (len > end - s) throw new HpackError('string literal past the end of the header block');
    this.pos = s + len;
    return huffman ? huffmanDecode(buf, s, s + len) : buf.toString('latin1', s, s + len);
  }

  private nameAt(index: number): string {
    return index <= STATIC_COUNT ? STATIC_NAMES[index]! : this.names[this.slot(index)]!;
  }

  /** Ring slot of HPACK index > 61 (§2.3.3: dynamic indices follow the static ones). */
  private slot(index: number): number {
    const i = index - STATIC_COUNT - 1; // 0 = newest
    if (i >= this.count) throw new HpackError(`index ${index} past the dynamic table (${this.count} entries)`);
    return (this.head - i) & this.mask;
  }

  /** §4.4: evict oldest entries to make room; an entry larger than the table empties it. */
  private insert(name: string, value: string): void {
    const entrySize = name.length + value.length + ENTRY_OVERHEAD;
    if (entrySize > this.capacity) {
      this.evictTo(0);
      return;
    }
    this.evictTo(this.capacity - entrySize);
    if (this.count === this.names.length) this.grow();
    this.head = (this.head + 1) & this.mask;
    this.names[this.head] = name;
    this.values[this.head] = value;
    this.count++;
    this.size += entrySize;
  }

  /** §4.3: evict from the oldest end until the table's size is at most `limit`. */
  private evictTo(limit: number): void {
    while (this.size > limit) {
      const slot = (this.head - this.count + 1) & this.mask;
      this.size -= this.names[slot]!.length + this.values[slot]!.length + ENTRY_OVERHEAD;
      this.names[slot] = ''; // release the strings
      this.values[slot] = '';
      this.count--;
    }
  }

  private grow(): void {
    const len = this.names.length * 2;
    const names = new Array<string>(len).fill('');
    const values = new Array<string>(len).fill('');
    // Copy oldest first, so the newest ends at slot count - 1.
    for (let i = 0; i < this.count; i++) {
      const from = (this.head - this.count + 1 + i) & this.mask;
      names[i] = this.names[from]!;
      values[i] = this.values[from]!;
    }
    this.names = names;
    this.values = values;
    this.mask = len - 1;
    this.head = this.count - 1;
  }
}

// Encoder lookups: the first static index of each name, and the index of each exact
// (name, value) pair.
const STATIC_NAME_INDEX = new Map<string, number>();
const STATIC_PAIR_INDEX = new Map<string, Map<string, number>>();
for (let i = 1; i <= STATIC_COUNT; i++) {
  const [name, value] = STATIC[i]!;
  if (!STATIC_NAME_INDEX.has(name)) STATIC_NAME_INDEX.set(name, i);
  let pairs = STATIC_PAIR_INDEX.get(name);
  if (pairs === undefined) STATIC_PAIR_INDEX.set(name, (pairs = new Map()));
  pairs.set(value, i);
}

// HPACK strings are octets; a JS string with a code unit above 0xff cannot be written as
// latin1 without silently corrupting it.
const NON_LATIN1 = /[^\u0000-\u00ff]/;

export class HpackEncoder {
  /**
   * Encode a header list (flat [name, value, ...], names lowercase) as a header block: a
   * fully indexed static field when name and value match a static entry, otherwise a literal
   * without indexing (§6.2.2) naming a static index when there is one. No Huffman coding and
   * no dynamic table. Throws TypeError for an odd-length list or a non-latin1 string.
   */
  encode(headers: readonly string[]): Buffer {
    if (headers.length % 2 !== 0) throw new TypeError('header list must be [name, value, ...] pairs');
    // Upper bound: per field a 6-octet index, two 6-octet lengths and the octets themselves
    // (an integer < 2^31 takes at most 1 + 5 octets, §5.1).
    let bound = 0;
    for (let i = 0; i < headers.length; i++) {
      const s = headers[i]!;
      if (NON_LATIN1.test(s)) {
        throw new TypeError(`header ${i % 2 ? 'value' : 'name'} is not latin1: ${JSON.stringify(s)}`);
      }
      bound += s.length + 9;
    }
    const buf = Buffer.allocUnsafe(bound);
    let pos = 0;
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i]!;
      const value = headers[i + 1]!;
      const full = STATIC_PAIR_INDEX.get(name)?.get(value);
      if (full !== undefined) {
        pos = writeInt(buf, pos, 0x80, 7, full); // §6.1
        continue;
      }
      const nameIndex = STATIC_NAME_INDEX.get(name);
      if (nameIndex !== undefined) {
        pos = writeInt(buf, pos, 0x00, 4, nameIndex); // §6.2.2, indexed name
      } else {
        buf[pos++] = 0x00; // §6.2.2, new name
        pos = writeString(buf, pos, name);
      }
      pos = writeString(buf, pos, value);
    }
    return buf.subarray(0, pos);
  }
}

/** §5.1: `value` with an N-bit prefix; `flags` are the representation's high bits. */
function writeInt(buf: Buffer, pos: number, flags: number, prefixBits: number, value: number): number {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    buf[pos++] = flags | value;
    return pos;
  }
  buf[pos++] = flags | max;
  value -= max;
  while (value >= 0x80) {
    buf[pos++] = (value & 0x7f) | 0x80;
    value = Math.floor(value / 0x80);
  }
  buf[pos++] = value;
  return pos;
}

/** §5.2: a raw (H = 0) string literal. */
function writeString(buf: Buffer, pos: number, s: string): number {
  pos = writeInt(buf, pos, 0x00, 7, s.length);
  return pos + buf.write(s, pos, 'latin1');
}
