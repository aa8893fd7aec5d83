// Unit tests of the request gate (native/gate via src/native/gate.ts).
// Run: npx tsc -p tsconfig.json && node --test dist/test/gate.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { createTable, scan, lastError, lastErrorMember, implementation, STRIDE, F, T, FLAG, ERR, NO_TABLE } from '../src/native/gate.js';

const TOP = createTable([
  'model', 'messages', 'stream', 'max_tokens', 'temperature', 'top_p', 'stop', 'tools', 'nvext',
  'stream_options', 'user', 'n', 'seed', 'logprobs', 'response_format', 'tool_choice',
]);
const NVEXT = createTable(['ignore_eos', 'top_k', 'greed_sampling', 'backend_instance_id', 'annotations']);

interface Member {
  field: number; key: string; type: number; raw: string; num: number; flags: number;
  keyStart: number; keyEnd: number; valStart: number; valEnd: number;
}

const OUT = new Float64Array(256 * STRIDE);

function run(body: Buffer, table = TOP, start = 0, end = body.length, out = OUT): Member[] | number {
  const n = scan(body, start, end, table, out);
  if (n < 0) return n;
  const members: Member[] = [];
  for (let i = 0; i < n; i++) {
    const r = i * STRIDE;
    const m: Member = {
      field: out[r + F.FIELD], keyStart: out[r + F.KEY_START], keyEnd: out[r + F.KEY_END],
      type: out[r + F.TYPE], valStart: out[r + F.VAL_START], valEnd: out[r + F.VAL_END],
      num: out[r + F.NUM], flags: out[r + F.FLAGS], key: '', raw: '',
    };
    m.key = body.toString('utf8', m.keyStart, m.keyEnd);
    m.raw = body.toString('utf8', m.valStart, m.valEnd);
    members.push(m);
  }
  return members;
}

function ok(body: Buffer | string, table = TOP): Member[] {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  const r = run(b, table);
  assert.ok(Array.isArray(r), `expected success, got ${r}: ${lastError()}`);
  return r;
}

function fails(body: Buffer | string, code: number, re?: RegExp): string {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  const r = run(b);
  assert.equal(r, code, `expected ${code} for ${JSON.stringify(b.toString('latin1'))}, got ${JSON.stringify(r)}`);
  const msg = lastError();
  if (re) assert.match(msg, re);
  return msg;
}

const byKey = (ms: Member[], k: string) => ms.find((m) => m.key === k)!;

const CHAT = {
  model: 'Qwen/Qwen3-0.6B',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.\nBe brief.' },
    { role: 'user', content: 'What is "2+2"? Answer in 日本語 ✓ 🚀' },
  ],
  stream: true,
  max_tokens: 16,
  temperature: 0.7,
  top_p: null,
  stop: ['\n\n', 'END'],
  nvext: { ignore_eos: false, top_k: 40, annotations: ['timing'], extra: { deep: [1, [2, [3]]] } },
  x_custom: 'vendor',
};

test('implementation is reported', () => {
  assert.match(implementation(), /^[a-z0-9]+$/);
});

test('typical chat body: scalars, spans, types, flags', () => {
  const body = Buffer.from(JSON.stringify(CHAT));
  const ms = ok(body);
  assert.equal(ms.length, Object.keys(CHAT).length);
  assert.deepEqual(ms.map((m) => m.key), Object.keys(CHAT));

  const model = byKey(ms, 'model');
  assert.equal(model.field, 0);
  assert.equal(model.type, T.STRING);
  assert.equal(model.raw, 'Qwen/Qwen3-0.6B');
  assert.equal(model.flags, 0);

  const messages = byKey(ms, 'messages');
  assert.equal(messages.field, 1);
  assert.equal(messages.type, T.ARRAY);
  assert.equal(messages.num, 2);
  assert.deepEqual(JSON.parse(messages.raw), CHAT.messages);

  const stream = byKey(ms, 'stream');
  assert.equal(stream.type, T.BOOLEAN);
  assert.equal(stream.num, 1);
  assert.equal(stream.raw, 'true');

  const maxTokens = byKey(ms, 'max_tokens');
  assert.equal(maxTokens.type, T.NUMBER);
  assert.equal(maxTokens.num, 16);
  assert.equal(maxTokens.flags & FLAG.INTEGER, FLAG.INTEGER);
  assert.equal(maxTokens.raw, '16');

  const temperature = byKey(ms, 'temperature');
  assert.equal(temperature.type, T.NUMBER);
  assert.equal(temperature.num, 0.7);
  assert.equal(temperature.flags & FLAG.INTEGER, 0);

  const topP = byKey(ms, 'top_p');
  assert.equal(topP.type, T.NULL);
  assert.equal(topP.raw, 'null');

  const stop = byKey(ms, 'stop');
  assert.equal(stop.type, T.ARRAY);
  assert.equal(stop.num, 2);
  assert.deepEqual(JSON.parse(stop.raw), CHAT.stop);

  const nvext = byKey(ms, 'nvext');
  assert.equal(nvext.field, 8);
  assert.equal(nvext.type, T.OBJECT);
  assert.equal(nvext.num, 4);
  assert.deepEqual(JSON.parse(nvext.raw), CHAT.nvext);

  const custom = byKey(ms, 'x_custom');
  assert.equal(custom.field, -1);
  assert.equal(custom.key, 'x_custom');
  assert.equal(body.toString('utf8', custom.keyStart - 1, custom.keyEnd + 1), '"x_custom"');
  assert.equal(custom.raw, 'vendor');
});

test('pretty-printed body: spans skip whitespace', () => {
  const body = Buffer.from(JSON.stringify(CHAT, null, 2) + '\n');
  const ms = ok(body);
  assert.deepEqual(JSON.parse(byKey(ms, 'messages').raw), CHAT.messages);
  assert.equal(byKey(ms, 'max_tokens').raw, '16');
  assert.equal(byKey(ms, 'stream').raw, 'true');
  assert.equal(byKey(ms, 'top_p').raw, 'null');
  assert.equal(byKey(ms, 'model').raw, 'Qwen/Qwen3-0.6B');
});

test('nested scan of nvext via its span gives absolute offsets', () => {
  const prefix = Buffer.from('  \n');
  const body = Buffer.concat([prefix, Buffer.from(JSON.stringify(CHAT))]);
  const top = ok(body);
  const nv = byKey(top, 'nvext');
  const ms = run(body, NVEXT, nv.valStart, nv.valEnd);
  assert.ok(Array.isArray(ms), lastError());
  assert.deepEqual(ms.map((m) => m.key), ['ignore_eos', 'top_k', 'annotations', 'extra']);
  assert.deepEqual(ms.map((m) => m.field), [0, 1, 4, -1]);
  const ignoreEos = byKey(ms, 'ignore_eos');
  assert.equal(ignoreEos.type, T.BOOLEAN);
  assert.equal(ignoreEos.num, 0);
  assert.equal(byKey(ms, 'top_k').num, 40);
  assert.deepEqual(JSON.parse(byKey(ms, 'annotations').raw), ['timing']);
  assert.deepEqual(JSON.parse(byKey(ms, 'extra').raw), CHAT.nvext.extra);
  // offsets are absolute in `body`
  assert.equal(body.toString('utf8', ms[0].keyStart, ms[0].keyEnd), 'ignore_eos');
  // an error inside a sub-range reports an absolute offset too
  const bad = Buffer.from('{"nvext":{"top_k":4x}}');
  assert.equal(scan(bad, 9, bad.length - 1, NVEXT, OUT), ERR.INVALID_JSON);
  assert.match(lastError(), /at byte 18/);
});

test('no table: every key is unknown', () => {
  const ms = ok('{"model":"m","a":1}', NO_TABLE);
  assert.deepEqual(ms.map((m) => m.field), [-1, -1]);
});

test('duplicate keys are all reported', () => {
  const ms = ok('{"model":"a","model":"b","zz":1,"zz":2}');
  assert.deepEqual(ms.map((m) => [m.field, m.key, m.raw]), [
    [0, 'model', 'a'], [0, 'model', 'b'], [-1, 'zz', '1'], [-1, 'zz', '2'],
  ]);
});

test('escapes: string values flagged, keys unescaped before matching', () => {
  const body = Buffer.from('{"mo\\u0064el":"a\\"b\\\\c\\n\\u00e9\\ud83d\\ude80","us\\u0065r":"plain","stream":false}');
  const ms = ok(body);
  const model = ms[0];
  assert.equal(model.field, 0);
  assert.equal(model.flags & FLAG.KEY_ESCAPED, FLAG.KEY_ESCAPED);
  assert.equal(model.key, 'mo\\u0064el'); // raw key bytes
  assert.equal(model.type, T.STRING);
  assert.equal(model.flags & FLAG.STRING_ESCAPED, FLAG.STRING_ESCAPED);
  assert.equal(JSON.parse(`"${model.raw}"`), 'a"b\\c\né🚀');
  const user = ms[1];
  assert.equal(user.field, 10);
  assert.equal(user.key, 'us\\u0065r');
  assert.equal(user.flags, FLAG.KEY_ESCAPED);
  assert.equal(ms[2].num, 0);
});

test('unicode keys and values', () => {
  const obj = { 'ключ': 'значение', '键': '值 🚀', model: 'é' };
  const body = Buffer.from(JSON.stringify(obj));
  const ms = ok(body);
  assert.deepEqual(ms.map((m) => m.key), Object.keys(obj));
  assert.deepEqual(ms.map((m) => m.raw), Object.values(obj));
  assert.deepEqual(ms.map((m) => m.field), [-1, -1, 0]);
  assert.deepEqual(ms.map((m) => m.flags), [0, 0, 0]);
});

test('numbers: integer / inexact flags and values', () => {
  const ms = ok('{"a":0,"b":-0,"c":1e2,"d":9007199254740993,"e":-12.5e-1,"f":9007199254740992,"g":-0.0,"h":123456789012}');
  const f = Object.fromEntries(ms.map((m) => [m.key, m]));
  assert.equal(f.a.flags, FLAG.INTEGER);
  assert.equal(f.b.flags, FLAG.INTEGER | FLAG.INEXACT);
  assert.ok(Object.is(f.b.num, -0));
  assert.equal(f.c.flags, 0);
  assert.equal(f.c.num, 100);
  assert.equal(f.d.flags, FLAG.INTEGER | FLAG.INEXACT);
  assert.equal(f.e.num, -1.25);
  assert.equal(f.e.raw, '-12.5e-1');
  assert.equal(f.f.flags, FLAG.INTEGER | FLAG.INEXACT); // 2^53: not a safe integer
  assert.equal(ok('{"x":9007199254740991}')[0].flags, FLAG.INTEGER);
  assert.equal(f.g.flags, FLAG.INEXACT);
  assert.equal(f.h.num, 123456789012);
});

test('empty containers and whitespace everywhere', () => {
  const ms = ok(' \t\r\n{ "a" : [ ] , "b" : { } , "c" : [ [ ] , { } ] }\n');
  assert.deepEqual(ms.map((m) => [m.key, m.type, m.raw, m.num]), [
    ['a', T.ARRAY, '[ ]', 0], ['b', T.OBJECT, '{ }', 0], ['c', T.ARRAY, '[ [ ] , { } ]', 2],
  ]);
  assert.equal(ok('{}').length, 0);
});

test('malformed bodies -> -1 with byte offsets', () => {
  const full = JSON.stringify(CHAT);
  fails(full.slice(0, full.length - 1), ERR.INVALID_JSON, /invalid JSON at byte \d+/); // truncated
  fails(full.slice(0, 60), ERR.INVALID_JSON, /invalid JSON at byte/);
  fails('{"model":"m","stream":true,}', ERR.INVALID_JSON, /at byte 27: unexpected character '}'/);
  fails('{"messages":[1,2,]}', ERR.INVALID_JSON, /at byte 17/);
  fails('{"model":"m"} x', ERR.INVALID_JSON, /at byte 14/);
  fails('{"model":"m"}{"a":1}', ERR.INVALID_JSON, /at byte 13/);
  fails('{"model":"\\x"}', ERR.INVALID_JSON, /at byte 10: invalid escape/);
  fails('{"messages":[{"content":"ok \\u12G4"}]}', ERR.INVALID_JSON, /invalid escape/);
  fails('{"messages":[{"content":"\\ud800 lone"}]}', ERR.INVALID_JSON, /invalid escape/);
  fails('{"model":"unterminated}', ERR.INVALID_JSON, /unterminated string|unexpected/);
  fails('{"a":tru}', ERR.INVALID_JSON, /invalid literal/);
  fails('{"a":[nul]}', ERR.INVALID_JSON, /invalid literal/);
  fails('{"a":[{"b":01}]}', ERR.INVALID_JSON, /invalid number/);
  fails('{"a":{"b":1.}}', ERR.INVALID_JSON, /invalid number/);
  fails('{"a":1 "b":2}', ERR.INVALID_JSON, /unexpected/);
  fails('{"a" 1}', ERR.INVALID_JSON, /unexpected/);
  fails('{a:1}', ERR.INVALID_JSON, /unexpected/);
  fails("{'a':1}", ERR.INVALID_JSON);
  fails('{"a":[1,2}', ERR.INVALID_JSON);
  fails('{"a":[{"b":[1,{"c":[1 2]}]}]}', ERR.INVALID_JSON, /unexpected character '2'/);
  fails('{"a":"tab\there"}', ERR.INVALID_JSON, /control character/);
  fails('{"\\q":1}', ERR.INVALID_JSON, /invalid escape sequence in key/);
  fails('{"a":{"\\q":1}}', ERR.INVALID_JSON, /invalid escape sequence in key/);
});

test('invalid UTF-8 inside a nested message string', () => {
  const body = Buffer.concat([
    Buffer.from('{"model":"m","messages":[{"role":"user","content":"caf'),
    Buffer.from([0xc3, 0x28]),
    Buffer.from('"}]}'),
  ]);
  const msg = fails(body, ERR.INVALID_JSON, /invalid UTF-8/);
  assert.match(msg, /at byte 54/); // the 0xC3 lead byte
  fails(Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), ERR.INVALID_JSON, /UTF-8/);
  fails(Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xf0, 0x9f]), Buffer.from('"}')]), ERR.INVALID_JSON, /UTF-8/);
});

test('not an object -> -2; invalid non-object -> -1; empty -> -1', () => {
  fails('[1,2]', ERR.NOT_OBJECT, /must be a JSON object, got an array/);
  fails('"str"', ERR.NOT_OBJECT, /got a string/);
  fails(' 42 ', ERR.NOT_OBJECT, /got a number/);
  fails('null', ERR.NOT_OBJECT, /got null/);
  fails('true', ERR.NOT_OBJECT, /got a boolean/);
  fails('[1,', ERR.INVALID_JSON);
  fails('1]', ERR.INVALID_JSON);
  fails('hello', ERR.INVALID_JSON);
  fails('', ERR.INVALID_JSON, /empty body/);
  fails('  \n ', ERR.INVALID_JSON, /empty/);
  const b = Buffer.from('{"a":1}');
  assert.equal(scan(b, 3, 3, TOP, OUT), ERR.INVALID_JSON);
  assert.match(lastError(), /at byte 3: empty body/);
});

test('capacity error -> -3, exact fit succeeds', () => {
  const obj: Record<string, number> = {};
  for (let i = 0; i < 10; i++) obj[`k${i}`] = i;
  const body = Buffer.from(JSON.stringify(obj));
  assert.equal(scan(body, 0, body.length, TOP, new Float64Array(9 * STRIDE)), ERR.CAPACITY);
  assert.match(lastError(), /too many members.*10.*capacity 9/);
  assert.equal(scan(body, 0, body.length, TOP, new Float64Array(10 * STRIDE)), 10);
  assert.equal(scan(body, 0, body.length, TOP, new Float64Array(10 * STRIDE + 7)), 10);
  // invalid JSON wins over capacity
  const bad = Buffer.from('{"a":1,"b":2,"c":x}');
  assert.equal(scan(bad, 0, bad.length, TOP, new Float64Array(STRIDE)), ERR.INVALID_JSON);
  assert.equal(scan(body, 0, body.length, TOP, new Float64Array(0)), ERR.CAPACITY);
});

test('programmer errors throw', () => {
  const b = Buffer.from('{}');
  assert.throws(() => scan(b, 0, 3, TOP, OUT), RangeError);
  assert.throws(() => scan(b, 2, 1, TOP, OUT), RangeError);
  assert.throws(() => scan(b, -1, 1, TOP, OUT), RangeError);
  assert.throws(() => scan(b, 0.5, 1, TOP, OUT), RangeError);
  assert.throws(() => scan(b, 0, 2, 1e6, OUT), RangeError);
  assert.throws(() => scan('{}' as unknown as Uint8Array, 0, 2, TOP, OUT), TypeError);
  assert.throws(() => scan(b, 0, 2, TOP, new Float32Array(8) as unknown as Float64Array), TypeError);
  assert.throws(() => createTable([1 as unknown as string]), TypeError);
});

test('works on a Buffer slice with a non-zero byteOffset and a Uint8Array', () => {
  const big = Buffer.from('xxxxx{"model":"m","max_tokens":5}yyyy');
  const slice = big.subarray(5, big.length - 4);
  const ms = run(slice);
  assert.ok(Array.isArray(ms));
  assert.equal(ms[1].num, 5);
  const u8 = new Uint8Array(slice);
  assert.equal(scan(u8, 0, u8.length, TOP, OUT), 2);
});

test('deep nesting: within limit ok, beyond limit rejected, no crash', () => {
  const ok400 = '{"a":' + '['.repeat(400) + ']'.repeat(400) + '}';
  assert.equal(ok(ok400).length, 1);
  const deep = '{"a":' + '['.repeat(100000) + ']'.repeat(100000) + '}';
  fails(deep, ERR.INVALID_JSON, /nesting too deep/);
  const deepObj = '{"a":' + '{"a":'.repeat(5000) + '1' + '}'.repeat(5000) + '}';
  fails(deepObj, ERR.INVALID_JSON, /nesting too deep/);
});

test('large body (long user message) and buffer reuse across sizes', () => {
  const long = 'lorem ipsum "quoted" \n'.repeat(20000);
  const obj = { ...CHAT, messages: [...CHAT.messages, { role: 'user', content: long }] };
  const body = Buffer.from(JSON.stringify(obj));
  const ms = ok(body);
  const m = byKey(ms, 'messages');
  assert.deepEqual(JSON.parse(m.raw), obj.messages);
  assert.equal(ok('{"a":1}')[0].num, 1); // small after large
});

// ---- fuzz: random bytes and mutated real bodies must never crash, and must agree with JSON.parse
// on validity (the gate is stricter only for lone surrogate escapes, which mutations cannot make
// from this corpus, and for > 512 nesting levels).
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
}

function judge(b: Buffer): 'object' | 'other' | 'invalid' | 'skip' {
  // reference: strict UTF-8 decode + JSON.parse
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(b);
  } catch {
    return 'invalid';
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return 'invalid';
  }
  if (/\\u[dD][89a-fA-F]/.test(text)) return 'skip'; // surrogate escapes: the gate is stricter
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? 'object' : 'other';
}

function checkAgainstReference(b: Buffer) {
  const out = new Float64Array(64 * STRIDE);
  const n = scan(b, 0, b.length, NO_TABLE, out);
  const ref = judge(b);
  if (ref === 'skip') return;
  const got = n >= 0 || n === ERR.CAPACITY ? 'object' : n === ERR.NOT_OBJECT ? 'other' : 'invalid';
  if (ref === 'invalid' && got !== 'invalid') {
    // JSON.parse numbers like 1e400 are valid for JS (Infinity) but rejected by the gate: fine.
    assert.fail(`gate accepted invalid JSON ${JSON.stringify(b.toString('latin1'))}`);
  }
  if (ref !== 'invalid' && got === 'invalid' && !/invalid number|nesting/.test(lastError())) {
    assert.fail(`gate rejected valid JSON ${JSON.stringify(b.toString('latin1'))}: ${lastError()}`);
  }
  if (ref !== 'invalid') assert.equal(got, ref, b.toString('latin1'));
  if (n > 0) {
    // spans stay inside the body and are ordered
    for (let i = 0; i < n; i++) {
      const r = i * STRIDE;
      assert.ok(out[r + F.KEY_START] <= out[r + F.KEY_END] && out[r + F.KEY_END] < out[r + F.VAL_START]);
      assert.ok(out[r + F.VAL_START] <= out[r + F.VAL_END] && out[r + F.VAL_END] <= b.length);
    }
  }
}

test('fuzz: random bytes never crash', () => {
  const rnd = lcg(1);
  const alphabet = Buffer.from('{}[]":,\\ \n0123456789-+.eEtruefalsnul"ab\\u00e9\u00ff');
  for (let i = 0; i < 20000; i++) {
    const len = Math.floor(rnd() * 40);
    const b = Buffer.alloc(len);
    const mode = rnd();
    for (let j = 0; j < len; j++) {
      b[j] = mode < 0.3 ? Math.floor(rnd() * 256) : alphabet[Math.floor(rnd() * alphabet.length)];
    }
    if (mode > 0.6 && len > 1) { b[0] = 0x7b; b[len - 1] = 0x7d; }
    checkAgainstReference(b);
  }
});

test('fuzz: mutated real bodies agree with JSON.parse', () => {
  const rnd = lcg(7);
  const seeds = [
    JSON.stringify(CHAT),
    JSON.stringify(CHAT, null, 1),
    '{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"type":"number","minimum":-1.5e3}}}}}],"n":1,"seed":-42}',
  ].map((s) => Buffer.from(s));
  const interesting = Buffer.from('{}[]",:\\0-.e tnf\u0001\u00ff\u00c3\u00a9');
  for (let i = 0; i < 20000; i++) {
    const src = seeds[i % seeds.length];
    let b = Buffer.from(src);
    const k = 1 + Math.floor(rnd() * 3);
    for (let m = 0; m < k; m++) {
      const at = Math.floor(rnd() * b.length);
      const op = rnd();
      if (op < 0.4) b[at] = interesting[Math.floor(rnd() * interesting.length)];
      else if (op < 0.6) b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
      else if (op < 0.8) b = Buffer.concat([b.subarray(0, at), Buffer.from([interesting[Math.floor(rnd() * interesting.length)]]), b.subarray(at)]);
      else b = b.subarray(0, at);
    }
    checkAgainstReference(b);
  }
});

test('lastErrorMember names the top-level member whose value is invalid, and only that', () => {
  const cases: [string, string][] = [
    ['{"model":"m","tools":[{"p":{"x":"\\uD800"}}]}', 'tools'], // lone surrogate deep inside
    ['{"messages":[{"content":"a\\uDC00"}]}', 'messages'],
    ['{"n":1,"stop":"a\\qb"}', 'stop'], // bad escape
    ['{"temperature":1e400}', 'temperature'], // past the double range
    ['{"x":tru}', 'x'], // bad literal
    [`{"nvext":${'['.repeat(600)}${']'.repeat(600)}}`, 'nvext'], // nesting past 512
    ['{"\\u0074ools":[1,nul]}', 'tools'], // an escaped key is unescaped
    ['{"model":"m"', ''], // truncated: in no member's value
    ['{"mo\\qdel":1}', ''], // a bad key
    ['[1]', ''],
  ];
  for (const [body, member] of cases) {
    assert.ok(scan(Buffer.from(body), 0, body.length, NO_TABLE, OUT) < 0, body);
    assert.equal(lastErrorMember(), member, `${body}: ${lastError()}`);
  }
  // a good scan leaves no stale member behind
  assert.equal(scan(Buffer.from('{"a":1}'), 0, 7, TOP, OUT), 1);
  assert.equal(lastErrorMember(), '');
});
