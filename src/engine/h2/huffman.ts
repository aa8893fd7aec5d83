// HPACK Huffman code (RFC 7541 §5.2, Appendix B) and a table-driven decoder.
//
// The decoder walks the code tree four bits at a time: the 256 internal nodes of the tree are
// the states, and each (state, nibble) pair has one precomputed transition saying where the
// walk lands, whether a symbol completed on the way (at most one can: the shortest code is 5
// bits) and whether the walk hit EOS. Decoding a byte is two table loads, no allocation.

/** A malformed header block; the HTTP/2 layer maps it to a COMPRESSION_ERROR (RFC 7540 §4.3). */
export class HpackError extends Error {
  override name = 'HpackError';
}

// Appendix B: the code of each symbol, aligned to the least significant bit, and its length
// in bits. Index = symbol (octet value); 256 is EOS. The code is canonical (codes of one
// length are consecutive, ordered by symbol) and complete (Kraft sum exactly 1); the tests
// check both, which catches a mistyped entry.
export const HUFFMAN_CODES: Uint32Array = Uint32Array.of(
  0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7,                  // 0-7
  0xfffffe8, 0xffffea, 0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb, 0xfffffec,             // 8-15
  0xfffffed, 0xfffffee, 0xfffffef, 0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3,             // 16-23
  0xffffff4, 0xffffff5, 0xffffff6, 0xffffff7, 0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb,              // 24-31
  0x14, 0x3f8, 0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa,                                                // 32-39
  0x3fa, 0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18,                                                   // 40-47
  0x0, 0x1, 0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d,                                                         // 48-55
  0x1e, 0x1f, 0x5c, 0xfb, 0x7ffc, 0x20, 0xffb, 0x3fc,                                                  // 56-63
  0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62,                                                    // 64-71
  0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a,                                                      // 72-79
  0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72,                                                      // 80-87
  0xfc, 0x73, 0xfd, 0x1ffb, 0x7fff0, 0x1ffc, 0x3ffc, 0x22,                                             // 88-95
  0x7ffd, 0x3, 0x23, 0x4, 0x24, 0x5, 0x25, 0x26,                                                       // 96-103
  0x27, 0x6, 0x74, 0x75, 0x28, 0x29, 0x2a, 0x7,                                                        // 104-111
  0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78,                                                        // 112-119
  0x79, 0x7a, 0x7b, 0x7ffe, 0x7fc, 0x3ffd, 0x1ffd, 0xffffffc,                                          // 120-127
  0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4, 0x3fffd5, 0x7fffd9,                         // 128-135
  0x3fffd6, 0x7fffda, 0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde, 0xffffeb, 0x7fffdf,                      // 136-143
  0xffffec, 0xffffed, 0x3fffd7, 0x7fffe0, 0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3,                      // 144-151
  0x7fffe4, 0x1fffdc, 0x3fffd8, 0x7fffe5, 0x3fffd9, 0x7fffe6, 0x7fffe7, 0xffffef,                      // 152-159
  0x3fffda, 0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc, 0x7fffe8, 0x7fffe9, 0x1fffde,                       // 160-167
  0x7fffea, 0x3fffdd, 0x3fffde, 0xfffff0, 0x1fffdf, 0x3fffdf, 0x7fffeb, 0x7fffec,                      // 168-175
  0x1fffe0, 0x1fffe1, 0x3fffe0, 0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef,                      // 176-183
  0xfffea, 0x3fffe2, 0x3fffe3, 0x3fffe4, 0x7ffff0, 0x3fffe5, 0x3fffe6, 0x7ffff1,                       // 184-191
  0x3ffffe0, 0x3ffffe1, 0xfffeb, 0x7fff1, 0x3fffe7, 0x7ffff2, 0x3fffe8, 0x1ffffec,                     // 192-199
  0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde, 0x7ffffdf, 0x3ffffe5, 0xfffff1, 0x1ffffed,               // 200-207
  0x7fff2, 0x1fffe3, 0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7, 0x7ffffe2, 0xfffff2,                  // 208-215
  0x1fffe4, 0x1fffe5, 0x3ffffe8, 0x3ffffe9, 0xffffffd, 0x7ffffe3, 0x7ffffe4, 0x7ffffe5,                // 216-223
  0xfffec, 0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7, 0x1fffe8, 0x7ffff3,                        // 224-231
  0x3fffea, 0x3fffeb, 0x1ffffee, 0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4,                   // 232-239
  0x3ffffeb, 0x7ffffe6, 0x3ffffec, 0x3ffffed, 0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea,              // 240-247
  0x7ffffeb, 0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee, 0x7ffffef, 0x7fffff0, 0x3ffffee,              // 248-255
  0x3fffffff,                                                                                          // 256 EOS
);

export const HUFFMAN_LENGTHS: Uint8Array = Uint8Array.of(
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,    // 0-15
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,    // 16-31
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,            // 32-47
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,                 // 48-63
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,                   // 64-79
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,                // 80-95
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,                   // 96-111
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,               // 112-127
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,    // 128-143
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,    // 144-159
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,    // 160-175
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,    // 176-191
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,    // 192-207
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,    // 208-223
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,    // 224-239
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,    // 240-255
  30,                                                                // 256 EOS
);

const EOS = 256;

// Transition entry layout (Uint32): bits 0-7 next state, 8-15 emitted symbol, then flags.
const EMIT = 1 << 16; // a symbol completed inside this nibble
const FAIL = 1 << 17; // the walk decoded EOS (§5.2: "MUST be treated as a decoding error")
const ACCEPT = 1 << 18; // ending the string in the target state is valid padding

/** TRANSITIONS[state << 4 | nibble]; built once at module load (~4k entries, 16 KiB). */
const TRANSITIONS = buildTransitions();

function buildTransitions(): Uint32Array {
  // Code tree: node 0 is the root; child[2n + bit] is an internal node (> 0) or a leaf
  // stored as ~symbol (< 0). 0 means "unset" (the root is nobody's child).
  const child = new Int32Array(2 * 256);
  let nodes = 1;
  for (let sym = 0; sym <= EOS; sym++) {
    const code = HUFFMAN_CODES[sym]!;
    const len = HUFFMAN_LENGTHS[sym]!;
    let node = 0;
    for (let i = len - 1; i >= 0; i--) {
      const slot = 2 * node + ((code >>> i) & 1);
      if (i === 0) {
        if (child[slot] !== 0) throw new Error(`huffman table: code of ${sym} is not prefix-free`);
        child[slot] = ~sym;
      } else {
        if (child[slot] === 0) {
          if (nodes === 256) throw new Error('huffman table: too many internal nodes');
          child[slot] = nodes++;
        } else if (child[slot]! < 0) {
          throw new Error(`huffman table: code of ${sym} is not prefix-free`);
        }
        node = child[slot]!;
      }
    }
  }
  if (nodes !== 256 || child.includes(0, 2)) throw new Error('huffman table: code is not complete');

  // §5.2: padding is the most significant bits of EOS (all ones), strictly shorter than 8 bits.
  // So a string may end only at the root or at one of the all-ones nodes of depth 1..7.
  const accepting = new Uint8Array(256);
  for (let node = 0, depth = 0; depth <= 7; depth++) {
    accepting[node] = 1;
    node = child[2 * node + 1]!; // EOS is 30 ones, so these are all internal nodes
  }

  const table = new Uint32Array(256 * 16);
  for (let state = 0; state < 256; state++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = state;
      let entry = 0;
      for (let bit = 3; bit >= 0; bit--) {
        const next = child[2 * node + ((nibble >>> bit) & 1)]!;
        if (next >= 0) {
          node = next;
          continue;
        }
        const sym = ~next;
        if (sym === EOS) {
          entry = FAIL;
          break;
        }
        entry = EMIT | (sym << 8);
        node = 0;
      }
      if (entry !== FAIL) entry |= node | (accepting[node] ? ACCEPT : 0);
      table[(state << 4) | nibble] = entry;
    }
  }
  return table;
}

// Output scratch, reused across calls: a Huffman string of n octets decodes to at most
// floor(8n / 5) symbols.
let scratch = Buffer.allocUnsafe(512);

/**
 * Decode the Huffman-coded string literal in buf[start, end) (RFC 7541 §5.2) into a latin1
 * string. Throws HpackError when the input contains EOS, or when its padding is 8 bits or
 * longer or is not a prefix of EOS (not all ones).
 */
export function huffmanDecode(buf: Uint8Array, start: number, end: number): string {
  const max = Math.floor(((end - start) * 8) / 5);
  if (max > scratch.length) scratch = Buffer.allocUnsafe(Math.max(max, 2 * scratch.length));
  const out = scratch;
  const table = TRANSITIONS;
  let n = 0;
  let state = 0;
  let entry = ACCEPT; // the empty string is valid
  for (let i = start; i < end; i++) {
    const byte = buf[i]!;
    entry = table[(state << 4) | (byte >>> 4)]!;
    if (entry & FAIL) throw new HpackError('huffman: EOS in string literal');
    if (entry & EMIT) out[n++] = (entry >>> 8) & 0xff;
    state = entry & 0xff;
    entry = table[(state << 4) | (byte & 0xf)]!;
    if (entry & FAIL) throw new HpackError('huffman: EOS in string literal');
    if (entry & EMIT) out[n++] = (entry >>> 8) & 0xff;
    state = entry & 0xff;
  }
  if (!(entry & ACCEPT)) throw new HpackError('huffman: invalid padding');
  return out.toString('latin1', 0, n);
}
