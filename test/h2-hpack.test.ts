// HPACK codec (src/engine/h2/hpack.ts, huffman.ts): the RFC 7541 Appendix C examples with
// their dynamic-table effects, the Huffman table itself, every malformed-input class, a real
// exchange with node:http2 (nghttp2's encoder and decoder) over a raw socket, and a fuzz loop.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';

import { HpackDecoder, HpackEncoder, HpackError } from '../src/engine/h2/hpack.js';
import { HUFFMAN_CODES, HUFFMAN_LENGTHS, huffmanDecode } from '../src/engine/h2/huffman.js';
import { mulberry32 as rng } from '../src/mock/seeded.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const decode = (d: HpackDecoder, block: Uint8Array): string[] => d.decode(block, 0, block.length);
type Pairs = [string, string][];
const flat = (pairs: Pairs): string[] => pairs.flat();
const entrySize = (pairs: Pairs): number => pairs.reduce((n, [k, v]) => n + k.length + v.length + 32, 0);

/**
 * Assert the decoder's dynamic table is exactly `entries` (newest first) of total RFC size
 * `size`. Reads each entry back with an indexed field (62 + i), which never changes the
 * table. The final probe one past the end must fail; this decoder detects a bad index before
 * changing anything, so that probe leaves it usable (an implementation property, not the API).
 */
function assertTable(d: HpackDecoder, entries: Pairs, size: number): void {
  assert.equal(entrySize(entries), size, 'expected entries add up to the RFC table size');
  entries.forEach(([name, value], i) => {
    assert.deepEqual(decode(d, indexed(62 + i)), [name, value], `dynamic entry ${62 + i}`);
  });
  assert.throws(() => decode(d, indexed(62 + entries.length)), HpackError);
}

/** §6.1 indexed field for `index` (7-bit prefix integer). */
function indexed(index: number): Buffer {
  if (index < 127) return Buffer.from([0x80 | index]);
  const out = [0xff];
  for (index -= 127; index >= 0x80; index >>= 7) out.push((index & 0x7f) | 0x80);
  out.push(index);
  return Buffer.from(out);
}

/** Huffman-encode with the table under test (test-only: the codec itself never encodes). */
function huffmanEncode(s: string): Buffer {
  const out: number[] = [];
  let acc = 0n;
  let bits = 0n;
  for (let i = 0; i < s.length; i++) {
    const sym = s.charCodeAt(i);
    acc = (acc << BigInt(HUFFMAN_LENGTHS[sym]!)) | BigInt(HUFFMAN_CODES[sym]!);
    bits += BigInt(HUFFMAN_LENGTHS[sym]!);
    while (bits >= 8n) {
      bits -= 8n;
      out.push(Number((acc >> bits) & 0xffn));
    }
  }
  if (bits > 0n) out.push(Number(((acc << (8n - bits)) | ((1n << (8n - bits)) - 1n)) & 0xffn)); // EOS-prefix padding
  return Buffer.from(out);
}


// ---------------------------------------------------------------------------------------------
// RFC 7541 Appendix C
// ---------------------------------------------------------------------------------------------

const REQ1: Pairs = [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']];
const REQ2: Pairs = [...REQ1, ['cache-control', 'no-cache']];
const REQ3: Pairs = [
  [':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], [':authority', 'www.example.com'],
  ['custom-key', 'custom-value'],
];
const REQ_TABLES: [Pairs, number][] = [
  [[[':authority', 'www.example.com']], 57],
  [[['cache-control', 'no-cache'], [':authority', 'www.example.com']], 110],
  [[['custom-key', 'custom-value'], ['cache-control', 'no-cache'], [':authority', 'www.example.com']], 164],
];

const DATE1 = 'Mon, 21 Oct 2013 20:13:21 GMT';
const DATE2 = 'Mon, 21 Oct 2013 20:13:22 GMT';
const COOKIE = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1';
const RES1: Pairs = [[':status', '302'], ['cache-control', 'private'], ['date', DATE1], ['location', 'https://www.example.com']];
const RES2: Pairs = [[':status', '307'], ['cache-control', 'private'], ['date', DATE1], ['location', 'https://www.example.com']];
const RES3: Pairs = [
  [':status', '200'], ['cache-control', 'private'], ['date', DATE2], ['location', 'https://www.example.com'],
  ['content-encoding', 'gzip'], ['set-cookie', COOKIE],
];
const RES_TABLES: [Pairs, number][] = [
  // 4 entries; nothing evicted yet.
  [[['location', 'https://www.example.com'], ['date', DATE1], ['cache-control', 'private'], [':status', '302']], 222],
  // ':status: 307' evicts ':status: 302'.
  [[[':status', '307'], ['location', 'https://www.example.com'], ['date', DATE1], ['cache-control', 'private']], 222],
  // The new date, content-encoding and set-cookie evict all but one.
  [[['set-cookie', COOKIE], ['content-encoding', 'gzip'], ['date', DATE2]], 215],
];

function runSeries(maxTableSize: number, blocks: string[], lists: Pairs[], tables: [Pairs, number][]): void {
  const d = new HpackDecoder(maxTableSize);
  blocks.forEach((block, i) => {
    assert.deepEqual(decode(d, hex(block)), flat(lists[i]!), `block ${i + 1}`);
    assertTable(d, ...tables[i]!);
  });
}

describe('RFC 7541 Appendix C', () => {
  test('C.2.1 literal with indexing', () => {
    const d = new HpackDecoder();
    assert.deepEqual(decode(d, hex('400a637573746f6d2d6b65790d637573746f6d2d686561646572')), ['custom-key', 'custom-header']);
    assertTable(d, [['custom-key', 'custom-header']], 55);
  });

  test('C.2.2 literal without indexing', () => {
    const d = new HpackDecoder();
    assert.deepEqual(decode(d, hex('040c2f73616d706c652f70617468')), [':path', '/sample/path']);
    assertTable(d, [], 0);
  });

  test('C.2.3 literal never indexed', () => {
    const d = new HpackDecoder();
    assert.deepEqual(decode(d, hex('100870617373776f726406736563726574')), ['password', 'secret']);
    assertTable(d, [], 0);
  });

  test('C.2.4 indexed field', () => {
    const d = new HpackDecoder();
    assert.deepEqual(decode(d, hex('82')), [':method', 'GET']);
    assertTable(d, [], 0);
  });

  test('C.3 requests without Huffman, one decoder', () => {
    runSeries(4096, [
      '828684410f7777772e6578616d706c652e636f6d',
      '828684be58086e6f2d6361636865',
      '828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565',
    ], [REQ1, REQ2, REQ3], REQ_TABLES);
  });

  test('C.4 requests with Huffman, one decoder', () => {
    runSeries(4096, [
      '828684418cf1e3c2e5f23a6ba0ab90f4ff',
      '828684be5886a8eb10649cbf',
      '828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf',
    ], [REQ1, REQ2, REQ3], REQ_TABLES);
  });

  test('C.5 responses without Huffman, table size 256 (evictions)', () => {
    runSeries(256, [
      '4803333032580770726976617465611d4d6f6e2c203231204f63742032303133'
        + '2032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d70'
        + '6c652e636f6d',
      '4803333037c1c0bf',
      '88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d'
        + '54c05a04677a69707738666f6f3d4153444a4b48514b425a584f5157454f5049'
        + '5541585157454f49553b206d61782d6167653d333630303b2076657273696f6e'
        + '3d31',
    ], [RES1, RES2, RES3], RES_TABLES);
  });

  test('C.6 responses with Huffman, table size 256 (evictions)', () => {
    runSeries(256, [
      '488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a6'
        + '2d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3',
      '4883640effc1c0bf',
      '88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab'
        + '77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f'
        + '9587316065c003ed4ee5b1063d5007',
    ], [RES1, RES2, RES3], RES_TABLES);
  });
});

// ---------------------------------------------------------------------------------------------
// Huffman table and decoder
// ---------------------------------------------------------------------------------------------

describe('Huffman (Appendix B)', () => {
  test('the table is 257 canonical, complete codes; EOS is 30 ones', () => {
    assert.equal(HUFFMAN_CODES.length, 257);
    assert.equal(HUFFMAN_LENGTHS.length, 257);
    assert.equal(HUFFMAN_CODES[256], 0x3fffffff);
    assert.equal(HUFFMAN_LENGTHS[256], 30);
    let kraft = 0n;
    for (const len of HUFFMAN_LENGTHS) kraft += 1n << BigInt(30 - len);
    assert.equal(kraft, 1n << 30n, 'Kraft sum is exactly 1');
    // Canonical: sorted by (length, symbol), each code is the previous + 1, shifted to length.
    const order = [...HUFFMAN_LENGTHS.keys()].sort((a, b) => HUFFMAN_LENGTHS[a]! - HUFFMAN_LENGTHS[b]! || a - b);
    let code = 0;
    let len = HUFFMAN_LENGTHS[order[0]!]!;
    for (const sym of order) {
      code *= 2 ** (HUFFMAN_LENGTHS[sym]! - len);
      len = HUFFMAN_LENGTHS[sym]!;
      assert.equal(HUFFMAN_CODES[sym], code, `code of symbol ${sym}`);
      code++;
    }
  });

  test('every symbol decodes, alone and between others', () => {
    for (let sym = 0; sym < 256; sym++) {
      const s = String.fromCharCode(sym);
      const e = huffmanEncode(s);
      assert.equal(huffmanDecode(e, 0, e.length), s, `symbol ${sym}`);
      const t = `a${s}0${s}`;
      const f = huffmanEncode(t);
      assert.equal(huffmanDecode(f, 0, f.length), t, `symbol ${sym} in context`);
    }
  });

  test('random latin1 strings round trip, at an offset inside a larger buffer', () => {
    const r = rng(7541);
    for (let i = 0; i < 2000; i++) {
      const len = Math.floor(r() * 40);
      let s = '';
      for (let j = 0; j < len; j++) s += String.fromCharCode(r() < 0.8 ? 0x20 + Math.floor(r() * 95) : Math.floor(r() * 256));
      const e = huffmanEncode(s);
      const framed = Buffer.concat([Buffer.from([0xaa, 0x55]), e, Buffer.from([0x00])]);
      assert.equal(huffmanDecode(framed, 2, 2 + e.length), s);
    }
    assert.equal(huffmanDecode(new Uint8Array(0), 0, 0), '');
  });

  test('Appendix C strings', () => {
    assert.equal(huffmanDecode(hex('f1e3c2e5f23a6ba0ab90f4ff'), 0, 12), 'www.example.com');
    assert.equal(huffmanDecode(hex('a8eb10649cbf'), 0, 6), 'no-cache');
    assert.equal(
      huffmanEncode(COOKIE).toString('hex'),
      '94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007',
    );
  });

  test('padding: up to 7 one bits is accepted', () => {
    assert.equal(huffmanDecode(Uint8Array.of(0x07), 0, 1), '0'); // 00000 + 3 padding bits
    const seven = huffmanEncode('aaaaa'); // 5 x 5 bits = 25, + 7 padding bits = 4 octets
    assert.equal(seven.length, 4);
    assert.equal(seven[3]! & 0x7f, 0x7f);
    assert.equal(huffmanDecode(seven, 0, 4), 'aaaaa');
    assert.equal(huffmanDecode(Uint8Array.of(0x00, 0x00, 0x0f), 0, 3), '0000'); // 20 bits + 4 padding bits
  });
});

// ---------------------------------------------------------------------------------------------
// Malformed input: every class must throw HpackError (a COMPRESSION_ERROR for the caller)
// ---------------------------------------------------------------------------------------------

describe('malformed header blocks throw HpackError', () => {
  // `why` pins the reason, so a block rejected for some other fault does not count.
  const rejects = (block: Uint8Array, why?: RegExp, d = new HpackDecoder(), end = block.length) =>
    assert.throws(
      () => d.decode(block, 0, end),
      (e: unknown) => e instanceof HpackError && (why === undefined || why.test(e.message)),
      Buffer.from(block).toString('hex'),
    );

  test('truncated integer', () => {
    const truncated = /truncated integer/;
    rejects(hex('ff'), truncated); // 7-bit prefix full, no continuation octet
    rejects(hex('ff80'), truncated); // continuation says "more", then the block ends
    rejects(hex('3f'), truncated); // size update, 5-bit prefix full
    rejects(hex('7f'), truncated); // literal with indexing, 6-bit prefix full
    rejects(hex('0f'), truncated); // literal without indexing, 4-bit prefix full
    rejects(hex('3fe1'), truncated); // continuation bit set on the last octet
    rejects(hex('3fe11f'), truncated, new HpackDecoder(), 2); // the last octet lies past `end`
  });

  test('integer overflow past 2^31 - 1, and overlong continuation', () => {
    // Size updates against a decoder allowing any size, so the integer is the only fault.
    const big = () => new HpackDecoder(0x7fffffff);
    // 31 + 0x7fffffe0 = 2^31 - 1, the largest accepted value (5 continuation octets).
    assert.deepEqual(decode(big(), hex('3fe0ffffff07')), []);
    rejects(hex('3fe1ffffff07'), /integer overflow/, big()); // 2^31
    rejects(hex('3fffffffff0f'), /integer overflow/, big()); // far past
    rejects(hex('ffffffffff7f'), /integer overflow/); // as an index, too
    // Zero-valued continuation octets: 5 are accepted (value 31), a 6th is overlong.
    assert.deepEqual(decode(big(), hex('3f8080808000')), []);
    rejects(hex('3f808080808000'), /too long/, big());
    rejects(hex('3f80808080808080808000'), /too long/, big());
  });

  test('index 0', () => {
    rejects(hex('80'), /index 0/);
    rejects(hex('8280'), /index 0/); // after a valid field
  });

  test('index past the dynamic table', () => {
    const past = /past the dynamic table/;
    rejects(hex('be'), past); // 62 with an empty table
    const d = new HpackDecoder();
    decode(d, hex('400161026262')); // a: bb -> index 62
    assert.deepEqual(decode(d, hex('be')), ['a', 'bb']);
    rejects(hex('bf'), past, d); // 63
    rejects(hex('7f010161'), past); // literal with indexing naming index 63 + 1 = 64
    rejects(hex('0f300161'), past); // literal without indexing naming index 15 + 48 = 63
    rejects(hex('1f300161'), past); // never indexed, same
  });

  test('string length past the end', () => {
    const past = /past the end/;
    const missing = /string literal expected/;
    rejects(hex('40036162'), past); // new name of length 3, 2 octets present
    rejects(hex('4001610262'), past); // value of length 2, 1 octet present
    rejects(hex('0403616263'), past, new HpackDecoder(), 4); // the 3rd octet lies past `end`
    rejects(hex('4001'), past); // name missing entirely
    rejects(hex('40'), missing); // no name literal at all
    rejects(hex('400161'), missing); // value missing
    rejects(hex('04'), missing); // :path with no value literal
    rejects(hex('047f'), /truncated integer/); // value length prefix full, continuation missing
    rejects(hex('047fff0f61'), past); // value length 127 + 127 + (15 << 7) = 2174, 1 octet present
  });

  test('Huffman: EOS inside, padding of 8+ bits, padding with a zero bit', () => {
    const eos = /EOS/;
    const padding = /padding/;
    rejects(hex('0484ffffffff'), eos); // EOS (30 ones) then 2 padding bits
    rejects(hex('04851fffffffff'), eos); // 'a' (00011), EOS, padding
    rejects(hex('04851fffffffe3'), eos); // 'a', EOS, 'a', padding: EOS in the middle
    rejects(hex('0481ff'), padding); // 8 one bits: padding too long
    rejects(hex('04821fff'), padding); // 'a' then 11 one bits
    rejects(hex('04811e'), padding); // 'a' then padding 110
    rejects(hex('048100'), padding); // '0' (00000) then padding 000
    rejects(hex('4081ff0161'), padding); // bad Huffman in a name
    // The valid counterparts decode.
    assert.deepEqual(decode(new HpackDecoder(), hex('04811f')), [':path', 'a']);
  });

  test('dynamic table size update above the maximum', () => {
    assert.deepEqual(decode(new HpackDecoder(), hex('3fe11f')), []); // 4096: allowed
    rejects(hex('3fe21f'), /above SETTINGS_HEADER_TABLE_SIZE/); // 4097
    rejects(hex('3fe11f'), /above SETTINGS_HEADER_TABLE_SIZE/, new HpackDecoder(256)); // 4096 > 256
    assert.deepEqual(decode(new HpackDecoder(256), hex('3fe101')), []); // 256
  });

  test('dynamic table size update after a header field', () => {
    rejects(hex('8220'), /after a header field/);
    rejects(hex('400161026262' + '20'), /after a header field/);
    rejects(hex('2082' + '20'), /after a header field/);
    // At the start, several are allowed (§4.2), and a shrink evicts.
    const d = new HpackDecoder();
    decode(d, hex('400161026262'));
    assert.deepEqual(decode(d, hex('203fe11f82')), [':method', 'GET']);
    rejects(hex('be'), /past the dynamic table/, d); // evicted by the update to 0
  });

  test('header list over the limit', () => {
    // Each field costs name + value + 32 (RFC 7540 §6.5.2): ':method: GET' = 42.
    const d = new HpackDecoder(4096, 84);
    assert.deepEqual(decode(d, hex('8282')), [':method', 'GET', ':method', 'GET']); // exactly 84
    rejects(hex('828282'), /header list larger/, new HpackDecoder(4096, 84));
    rejects(hex('040161'), /header list larger/, new HpackDecoder(4096, 37)); // ':path: a' = 38
  });
});

describe('dynamic table', () => {
  test('an entry larger than the table empties it and is not added (§4.4)', () => {
    const d = new HpackDecoder(64);
    decode(d, hex('400161026262')); // a: bb, size 35
    assertTable(d, [['a', 'bb']], 35);
    // name 'cc' (2) + value 31 chars + 32 = 65 > 64
    assert.deepEqual(decode(d, hex('400263631f' + '78'.repeat(31))), ['cc', 'x'.repeat(31)]);
    assertTable(d, [], 0);
    // The table still works normally afterwards.
    decode(d, hex('400161026262'));
    decode(d, hex('400163026464')); // c: dd evicts a: bb (35 + 35 > 64)
    assertTable(d, [['c', 'dd']], 35);
  });

  test('eviction keeps the newest entries, across ring growth and wrap-around', () => {
    const d = new HpackDecoder(4096);
    const model: Pairs = []; // newest first
    const r = rng(42);
    for (let i = 0; i < 3000; i++) {
      const name = `n${i % 7}`;
      const value = 'v'.repeat(Math.floor(r() * 80)) + i;
      const block = Buffer.concat([
        hex('40'), Buffer.from([name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value),
      ]);
      decode(d, block);
      model.unshift([name, value]);
      while (entrySize(model) > 4096) model.pop();
      if (i % 97 === 0 || i === 2999) {
        // Some rounds shrink and regrow the table (size update to a smaller value, then back).
        if (i % 2 === 0) {
          decode(d, hex('3fe101')); // size update to 256
          while (entrySize(model) > 256) model.pop();
          decode(d, hex('3fe11f')); // back to 4096
        }
        assertTable(d, model, entrySize(model));
      }
    }
  });

  test('a literal may name the entry it evicts (§4.4)', () => {
    const d = new HpackDecoder(40); // room for one small entry
    decode(d, hex('400161026262')); // a: bb (35)
    assert.deepEqual(decode(d, hex('7e0163')), ['a', 'c']); // name = index 62 ('a'), value 'c'
    assertTable(d, [['a', 'c']], 34);
  });
});

// ---------------------------------------------------------------------------------------------
// Encoder
// ---------------------------------------------------------------------------------------------

describe('HpackEncoder', () => {
  const enc = new HpackEncoder();

  test('representations', () => {
    assert.equal(enc.encode([':method', 'POST']).toString('hex'), '83');
    assert.equal(enc.encode([':method', 'GET', ':scheme', 'http', ':scheme', 'https']).toString('hex'), '828687');
    assert.equal(enc.encode([':authority', '']).toString('hex'), '81');
    assert.equal(enc.encode([':path', '/x']).toString('hex'), '04022f78'); // literal w/o indexing, name 4
    // content-type is index 31: 4-bit prefix 15 + continuation 16.
    const grpc = Buffer.from('application/grpc').toString('hex');
    assert.equal(enc.encode(['content-type', 'application/grpc']).toString('hex'), '0f1010' + grpc);
    // New name: 0x00, name literal, value literal.
    assert.equal(enc.encode(['te', 'trailers']).toString('hex'), '0002746508747261696c657273');
    assert.equal(enc.encode([]).length, 0);
  });

  test('round trip through the decoder; the decoder table stays empty', () => {
    const lists: string[][] = [
      [':method', 'POST', ':scheme', 'https', ':path', '/sglang.runtime.v1.SglangScheduler/Generate', ':authority', 'engine:30000',
        'content-type', 'application/grpc', 'te', 'trailers', 'grpc-timeout', '10S', 'user-agent', 'portico/0.1'],
      ['x-empty', '', '', 'empty-name', 'accept-encoding', 'gzip, deflate', 'accept-encoding', 'gzip'],
      ['x-long', 'y'.repeat(200), 'x-longer', 'z'.repeat(70000)], // multi-octet length prefixes
      ['x-latin1', 'caf\u00e9 \u00ff\u0080\u0000', 'x-\u00e9', 'v'],
      [':status', '200', ':status', '404', ':status', '201'],
    ];
    for (const list of lists) {
      const d = new HpackDecoder(4096, 1 << 20);
      const block = enc.encode(list);
      assert.deepEqual(decode(d, block), list);
      assertTable(d, [], 0);
    }
  });

  test('rejects odd lists and non-latin1 strings', () => {
    assert.throws(() => enc.encode(['a']), TypeError);
    assert.throws(() => enc.encode(['x-a', 'snow \u2603']), TypeError);
    assert.throws(() => enc.encode(['\u0100', 'v']), TypeError);
  });
});

// ---------------------------------------------------------------------------------------------
// Against node:http2 (nghttp2) over a raw socket
// ---------------------------------------------------------------------------------------------

const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, CONTINUATION: 9 } as const;
const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

function frame(type: number, flags: number, stream: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream, 5);
  return Buffer.concat([h, payload]);
}

interface Block {
  stream: number;
  headers: string[];
  length: number; // octets in the HPACK block
  padded: boolean;
  continuations: number;
}

/**
 * A minimal raw HTTP/2 client: parses the server's frames, reassembles HEADERS +
 * CONTINUATION into header blocks and decodes them all, in order, with one HpackDecoder.
 */
class RawClient {
  readonly decoder = new HpackDecoder();
  readonly blocks: Block[] = [];
  private pending = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private current: Omit<Block, 'headers' | 'length'> & { endStream: boolean } | null = null;
  private waiters = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private failure: Error | null = null;

  constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      try {
        this.onData(chunk);
      } catch (e) {
        this.fail(e as Error);
      }
    });
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(new Error('socket closed')));
  }

  /** Resolves when `stream` ends (END_STREAM on DATA or on a trailing header block). */
  ended(stream: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiters.set(stream, { resolve, reject }));
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const w of this.waiters.values()) w.reject(e);
    this.waiters.clear();
  }

  private end(stream: number): void {
    this.waiters.get(stream)?.resolve();
    this.waiters.delete(stream);
  }

  private onData(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 9) {
      const len = this.pending.readUIntBE(0, 3);
      if (this.pending.length < 9 + len) break;
      const type = this.pending[3]!;
      const flags = this.pending[4]!;
      const stream = this.pending.readUInt32BE(5) & 0x7fffffff;
      const payload = this.pending.subarray(9, 9 + len);
      this.pending = this.pending.subarray(9 + len);
      this.onFrame(type, flags, stream, payload);
    }
  }

  private onFrame(type: number, flags: number, stream: number, payload: Buffer): void {
    if (this.current && type !== FRAME.CONTINUATION) throw new Error(`frame ${type} inside a header block`);
    switch (type) {
      case FRAME.SETTINGS:
        if (!(flags & FLAG.ACK)) this.socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0));
        break;
      case FRAME.PING:
        if (!(flags & FLAG.ACK)) this.socket.write(frame(FRAME.PING, FLAG.ACK, 0, payload));
        break;
      case FRAME.HEADERS: {
        let from = 0;
        let pad = 0;
        if (flags & FLAG.PADDED) {
          pad = payload[0]!;
          from = 1;
        }
        if (flags & FLAG.PRIORITY) from += 5; // exclusive bit + stream dependency, weight
        if (from + pad > payload.length) throw new Error('bad HEADERS padding');
        this.fragments = [payload.subarray(from, payload.length - pad)];
        this.current = { stream, padded: (flags & FLAG.PADDED) !== 0, continuations: 0, endStream: (flags & FLAG.END_STREAM) !== 0 };
        if (flags & FLAG.END_HEADERS) this.finishBlock();
        break;
      }
      case FRAME.CONTINUATION:
        if (!this.current || this.current.stream !== stream) throw new Error('unexpected CONTINUATION');
        this.fragments.push(payload);
        this.current.continuations++;
        if (flags & FLAG.END_HEADERS) this.finishBlock();
        break;
      case FRAME.DATA:
        if (flags & FLAG.END_STREAM) this.end(stream);
        break;
      case FRAME.RST_STREAM:
        throw new Error(`RST_STREAM on ${stream}: code ${payload.readUInt32BE(0)}`);
      case FRAME.GOAWAY:
        throw new Error(`GOAWAY: code ${payload.readUInt32BE(4)} ${payload.subarray(8).toString()}`);
      default: // WINDOW_UPDATE, PRIORITY, ...: nothing to do here
    }
  }

  private finishBlock(): void {
    const { endStream, ...meta } = this.current!;
    this.current = null;
    const block = Buffer.concat(this.fragments);
    this.fragments = [];
    this.blocks.push({ ...meta, headers: decode(this.decoder, block), length: block.length });
    if (endStream) this.end(meta.stream);
  }
}

/** Node's header object for a flat list (repeated names become arrays, order preserved). */
function toNodeHeaders(list: readonly string[]): http2.OutgoingHttpHeaders {
  const obj: Record<string, string | string[]> = {};
  for (let i = 0; i < list.length; i += 2) {
    const [k, v] = [list[i]!, list[i + 1]!];
    const prev = obj[k];
    obj[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return obj;
}

describe('interop with node:http2 (nghttp2)', () => {
  // Our encoder's blocks to nghttp2's decoder; nghttp2's encoder (dynamic table, Huffman,
  // padding, CONTINUATION) to our decoder, several requests on one connection.
  test('raw-socket exchange, three requests on one connection', { timeout: 30_000 }, async () => {
    const r = rng(2);
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789-_.';
    let long = '';
    for (let i = 0; i < 40_000; i++) long += alphabet[Math.floor(r() * alphabet.length)];

    const date = 'Tue, 02 Dec 2025 10:00:00 GMT';
    const requests: string[][] = [
      [':method', 'GET', ':scheme', 'http', ':path', '/x', ':authority', '127.0.0.1', 'x-a', 'b'],
      [':method', 'POST', ':scheme', 'http', ':path', '/y?q=1', ':authority', '127.0.0.1',
        'content-type', 'application/grpc', 'te', 'trailers'],
      [':method', 'GET', ':scheme', 'http', ':path', '/z', ':authority', '127.0.0.1', 'x-a', 'c', 'user-agent', 'portico-test'],
    ];
    const responses: { headers: string[]; trailers: string[] }[] = [
      {
        headers: [':status', '200', 'content-type', 'application/grpc', 'date', date, 'x-request-id', 'req-0001',
          'set-cookie', 'a=1; Path=/; HttpOnly', 'set-cookie', 'b=2; Max-Age=3600', 'x-trace', 'k'.repeat(300)],
        trailers: ['grpc-status', '0', 'grpc-message', 'OK'],
      },
      {
        headers: [':status', '200', 'content-type', 'application/grpc', 'date', date, 'x-request-id', 'req-0002',
          'set-cookie', 'a=1; Path=/; HttpOnly', 'x-long', long],
        trailers: ['grpc-status', '0', 'grpc-message', 'OK'],
      },
      {
        headers: [':status', '404', 'content-type', 'text/plain; charset=utf-8', 'date', date, 'x-request-id', 'req-0003',
          'cache-control', 'no-store', 'x-trace', 'k'.repeat(300), 'vary', 'accept-encoding'],
        trailers: ['grpc-status', '5', 'grpc-message', 'not found: /z', 'x-elapsed', '12ms'],
      },
    ];

    const seen: string[][] = [];
    const server = http2.createServer({ paddingStrategy: http2.constants.PADDING_STRATEGY_MAX });
    const sessions = new Set<http2.ServerHttp2Session>();
    server.on('session', (s) => sessions.add(s));
    // Node passes the raw [name, value, ...] list as the 4th argument (not in @types/node).
    const onStream = (stream: http2.ServerHttp2Stream, _headers: unknown, _flags: number, rawHeaders: string[]) => {
      const i = seen.push(rawHeaders) - 1;
      const res = responses[i]!;
      stream.respond(toNodeHeaders(res.headers), { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers(toNodeHeaders(res.trailers)));
      stream.end(`body ${i}`);
    };
    server.on('stream', onStream as (stream: http2.ServerHttp2Stream) => void);
    server.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const client = new RawClient(socket);

    try {
      const enc = new HpackEncoder();
      socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'), frame(FRAME.SETTINGS, 0, 0)]));
      for (let i = 0; i < requests.length; i++) {
        const stream = 2 * i + 1;
        const done = client.ended(stream);
        socket.write(frame(FRAME.HEADERS, FLAG.END_STREAM | FLAG.END_HEADERS, stream, enc.encode(requests[i]!)));
        await done;
      }

      // nghttp2 decoded what our encoder wrote.
      assert.deepEqual(seen, requests);

      // We decoded, in connection order with one decoder, exactly what the server sent.
      assert.deepEqual(
        client.blocks.map((b) => [b.stream, b.headers]),
        responses.flatMap((res, i) => [[2 * i + 1, res.headers], [2 * i + 1, res.trailers]]),
      );

      // ...and the blocks exercised what they were meant to.
      const [, t1, h2, t2, h3] = client.blocks;
      assert.ok(client.blocks.some((b) => b.padded), 'some HEADERS frame was PADDED');
      assert.ok(h2!.continuations >= 1, 'the 40 kB header came in CONTINUATION frames');
      assert.ok(h2!.length < long.length * 0.9, 'nghttp2 Huffman-coded the long value');
      // Repeated fields are dynamic-table references: the second trailers are two 1-octet
      // indexed fields; a literal 'grpc-status' name alone would take 12 octets.
      assert.ok(t2!.length <= 4 && t2!.length < t1!.length, `second trailers block is ${t2!.length} octets`);
      assert.ok(h3!.length < 100, `third response block (x-trace 300 octets again) is ${h3!.length} octets`);
    } finally {
      socket.destroy();
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Fuzz
// ---------------------------------------------------------------------------------------------

describe('fuzz', () => {
  test('20 000 random blocks: a string[] of even length, or HpackError, nothing else', () => {
    const r = rng(0x5eed);
    const seeds = [
      '828684418cf1e3c2e5f23a6ba0ab90f4ff',
      '88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab'
        + '77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f'
        + '9587316065c003ed4ee5b1063d5007',
      '400a637573746f6d2d6b65790d637573746f6d2d686561646572be',
      '3fe11f20828785bf',
    ].map(hex);
    let ok = 0;
    let rejected = 0;
    for (let i = 0; i < 20_000; i++) {
      let block: Buffer;
      if (i % 2 === 0) {
        block = Buffer.alloc(Math.floor(r() * 64));
        for (let j = 0; j < block.length; j++) block[j] = Math.floor(r() * 256);
      } else {
        // Mutated valid block: flip a few octets and maybe truncate, to get past the first byte.
        block = Buffer.from(seeds[i % seeds.length]!);
        for (let k = 1 + Math.floor(r() * 3); k > 0; k--) block[Math.floor(r() * block.length)] = Math.floor(r() * 256);
        if (r() < 0.3) block = block.subarray(0, Math.floor(r() * block.length));
      }
      const maxTable = r() < 0.5 ? 4096 : Math.floor(r() * 512);
      try {
        const out = new HpackDecoder(maxTable, 1024).decode(block, 0, block.length);
        assert.ok(Array.isArray(out) && out.length % 2 === 0 && out.every((s) => typeof s === 'string'), block.toString('hex'));
        ok++;
      } catch (e) {
        if (!(e instanceof HpackError)) assert.fail(`${block.toString('hex')}: ${String(e)}`);
        rejected++;
      }
    }
    assert.ok(ok > 500 && rejected > 500, `both outcomes exercised (${ok} decoded, ${rejected} rejected)`);
  });
});
