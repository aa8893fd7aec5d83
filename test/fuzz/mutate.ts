// Mutations of a valid request: structural ones on the JSON value (type swaps, deleted and
// added keys, special numbers, huge strings, deep nesting, nulls everywhere, lone
// surrogates, duplicate keys, stream on/off), byte-level ones on the serialized body
// (truncation, BOM, invalid UTF-8, flipped bytes) and header ones (content-type, accept,
// auth, long values). Content-Length is always the body's true length: the framing lane
// fuzzes hostile framing; this fuzzer keeps the framing valid so every input reaches a handler.

import type { Rng } from './rng.js';
import { FIELD_NAMES, MODEL_OUTPUT, type Endpoint } from './seeds.js';

/** A JSON fragment written verbatim (numbers JSON.stringify cannot produce, raw escapes). */
class Raw {
  constructor(readonly text: string) {}
}
/** An object written with a repeated key (the second value follows the first). */
class Dup {
  constructor(
    readonly obj: Record<string, unknown>,
    readonly key: string,
    readonly second: unknown,
  ) {}
}

export interface FuzzInput {
  readonly endpoint: Endpoint;
  readonly headers: [string, string][];
  readonly body: Buffer;
  /** What was done, for the report of a failing input. */
  readonly ops: string[];
}

const NUMBERS = ['1e400', '-1e400', '-0', '-0.0', '0e0', '1E+2', '18446744073709551616', '18446744073709551615', '9223372036854775808', '-9223372036854775809', '9007199254740993', '4294967296', '4294967295', '2147483648', '-2147483649', '-1', '0', '1', '0.5', '1.0', '1e-400', '123456789012345678901234567890', '0.000000000000000000000000000001', '2.5e-3', '1e308', '-1e308'];
const STRINGS = ['', ' ', 'x', '\u0000', '\ud800', '\udfff', '\ud83d\ude80', '<think>', '</think>', '<tool_call>', '<|im_start|>', '<|im_end|>', '<|endoftext|>', '{"a":', '[', 'null', '1e400', 'é', '\u202e', '\r\n', '%s%n', '{{ raise_exception("x") }}', '{% for x in y %}', MODEL_OUTPUT];
/** Raw JSON string literals with escapes JSON.stringify would never write. */
const RAW_STRINGS = ['"\\ud800"', '"\\udc00x"', '"a\\ud83d"', '"\\ud83d\\ud83d"', '"\\u0000"', '"\\uDFFF\\uD800"', '"\\x41"', '"\\u12"', '"\\/"', '"\\U0001F600"'];

function smallValue(r: Rng): unknown {
  switch (r.int(12)) {
    case 0: return null;
    case 1: return r.chance(0.5);
    case 2: return new Raw(r.pick(NUMBERS));
    case 3: return r.pick(STRINGS);
    case 4: return new Raw(r.pick(RAW_STRINGS));
    case 5: return [];
    case 6: return {};
    case 7: return [r.pick(STRINGS), new Raw(r.pick(NUMBERS)), null];
    case 8: return { type: r.pick(['text', 'image_url', 'function', 'tool_use', 'input_text', 'bogus']), text: r.pick(STRINGS) };
    case 9: return r.int(1 << 20);
    case 10: return [{ role: r.pick(['user', 'assistant', 'system', 'tool', 'developer', 'bogus']), content: r.pick(STRINGS) }];
    default: return 'x'.repeat(r.int(300));
  }
}

function hugeString(r: Rng): string {
  // deep nesting inside a tool call of the text a parser reads (/parse/*, echoed raw prompts):
  // 2M `[` after a hermes marker overflowed the native stack and killed the process
  if (r.chance(0.2)) return '<tool_call>{"name":"get_weather","arguments":' + r.pick(['[', '{"a":']).repeat(r.pick([100_000, 2_000_000]));
  const unit = r.pick(['a', 'é', '🚀', '<think>', '<|im_start|>', ' word', '\\', '"']);
  const size = r.pick([4_096, 65_536, 262_144, 1_048_576]);
  return unit.repeat(Math.ceil(size / unit.length));
}

function deepNest(r: Rng): Raw {
  const depth = r.pick([64, 256, 1_000, 1_000, 10_000, 10_000, 100_000]);
  if (r.chance(0.5)) return new Raw('['.repeat(depth) + ']'.repeat(depth));
  return new Raw('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
}

type Container = Record<string, unknown> | unknown[];

/** Every container in the tree, with its keys (so a mutation can pick a random spot). */
function containers(v: unknown, out: Container[] = []): Container[] {
  if (v && typeof v === 'object' && !(v instanceof Raw) && !(v instanceof Dup)) {
    out.push(v as Container);
    for (const c of Array.isArray(v) ? v : Object.values(v)) containers(c, out);
  }
  return out;
}

function keysOf(c: Container): (string | number)[] {
  return Array.isArray(c) ? c.map((_, i) => i) : Object.keys(c);
}

function set(c: Container, k: string | number, v: unknown): void {
  (c as Record<string | number, unknown>)[k] = v;
}

function nullsEverywhere(v: unknown, r: Rng): unknown {
  if (v === null || typeof v !== 'object' || v instanceof Raw) return r.chance(0.7) ? null : v;
  if (Array.isArray(v)) return v.map((x) => nullsEverywhere(x, r));
  const o: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) o[k] = nullsEverywhere(x, r);
  return o;
}

/** One structural mutation of `root` (in place where it can; returns the new root). */
function mutateValue(root: unknown, r: Rng, ops: string[]): unknown {
  const all = containers(root);
  if (all.length === 0) return root; // a Dup or a scalar root: nothing left to reach into
  const c = r.pick(all);
  const keys = keysOf(c);
  const k = keys.length > 0 ? r.pick(keys) : undefined;
  switch (r.int(14)) {
    case 0:
    case 1:
    case 2:
      if (k === undefined) break;
      ops.push(`swap ${k}`);
      set(c, k, smallValue(r));
      break;
    case 3:
      if (k === undefined) break;
      ops.push(`delete ${k}`);
      if (Array.isArray(c)) c.splice(k as number, 1);
      else delete c[k as string];
      break;
    case 4: {
      const name = r.pick(FIELD_NAMES);
      ops.push(`add ${name}`);
      if (Array.isArray(c)) c.push(smallValue(r));
      else c[name] = smallValue(r);
      break;
    }
    case 5:
      if (k === undefined) break;
      ops.push(`number ${k}`);
      set(c, k, new Raw(r.pick(NUMBERS)));
      break;
    case 6:
      if (k === undefined || !r.chance(0.1)) break; // huge bodies are slow: keep them rare
      ops.push(`huge ${k}`);
      set(c, k, hugeString(r));
      break;
    case 7:
      if (k === undefined || !r.chance(0.3)) break;
      ops.push(`nest ${k}`);
      set(c, k, deepNest(r));
      break;
    case 8:
      ops.push('nulls everywhere');
      return nullsEverywhere(root, r);
    case 9:
      if (k === undefined || Array.isArray(c)) break;
      ops.push(`duplicate ${k}`);
      return replaceContainer(root, c, new Dup(c, k as string, smallValue(r)));
    case 10:
      if (k === undefined) break;
      ops.push(`lone surrogate ${k}`);
      set(c, k, new Raw(r.pick(RAW_STRINGS)));
      break;
    case 11:
      if (Array.isArray(root) || typeof root !== 'object' || root === null) break;
      ops.push('stream toggle');
      (root as Record<string, unknown>).stream = r.pick([true, false, null, 'true', 1]);
      if (r.chance(0.5)) (root as Record<string, unknown>).stream_options = r.pick([{ include_usage: true }, { include_usage: 'yes' }, null, { continuous_usage_stats: true }]);
      break;
    case 12:
      if (k === undefined) break;
      ops.push(`wrap ${k}`);
      set(c, k, r.chance(0.5) ? [(c as Record<string | number, unknown>)[k]] : { value: (c as Record<string | number, unknown>)[k] });
      break;
    default:
      if (Array.isArray(c) && c.length > 0) {
        ops.push('repeat element');
        const n = r.pick([2, 3, 10, 10, 100]); // 1000 prompts of a batch completion cost 0.1-0.2 s each: rare enough
        for (let i = 0; i < n; i++) c.push(structuredCloneSafe(c[0]));
      }
  }
  return root;
}

function structuredCloneSafe(v: unknown): unknown {
  return v instanceof Raw || v instanceof Dup ? v : structuredClone(v);
}

function replaceContainer(root: unknown, target: Container, by: Dup): unknown {
  if (root === target) return by;
  for (const c of containers(root)) {
    for (const k of keysOf(c)) if ((c as Record<string | number, unknown>)[k] === target) set(c, k, by);
  }
  return root;
}

export function serialize(v: unknown): string {
  if (v instanceof Raw) return typeof v.text === 'string' ? v.text : serialize(v.text);
  if (v instanceof Dup) {
    const inner = serialize(v.obj);
    const extra = `${JSON.stringify(v.key)}:${serialize(v.second)}`;
    return inner === '{}' ? `{${extra}}` : `${inner.slice(0, -1)},${extra}}`;
  }
  if (Array.isArray(v)) return `[${v.map(serialize).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${serialize(x)}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

const BAD_UTF8 = [Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xf4, 0x90, 0x80, 0x80]), Buffer.from([0xe2, 0x82]), Buffer.from([0x80])];

function mutateBytes(b: Buffer, r: Rng, ops: string[]): Buffer {
  switch (r.int(8)) {
    case 0: {
      const at = r.int(b.length + 1);
      ops.push(`truncate ${at}`);
      return b.subarray(0, at);
    }
    case 1:
      ops.push('bom');
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]);
    case 2: {
      // inside a string where there is one (after a quote), else anywhere
      const q = b.indexOf(0x22, r.int(b.length));
      const at = q >= 0 ? q + 1 : r.int(b.length + 1);
      ops.push(`invalid utf-8 at ${at}`);
      return Buffer.concat([b.subarray(0, at), r.pick(BAD_UTF8), b.subarray(at)]);
    }
    case 3: {
      const out = Buffer.from(b);
      const n = 1 + r.int(4);
      for (let i = 0; i < n && out.length > 0; i++) out[r.int(out.length)] = r.int(256);
      ops.push(`flip ${n}`);
      return out;
    }
    case 4: {
      const at = r.int(b.length + 1);
      const junk = r.pick(['{', '}', '[', ']', ',', ':', '"', '\\', ' ', '\u0000', 'null', '1e400']);
      ops.push(`insert ${JSON.stringify(junk)} at ${at}`);
      return Buffer.concat([b.subarray(0, at), Buffer.from(junk), b.subarray(at)]);
    }
    case 5:
      ops.push('trailing garbage');
      return Buffer.concat([b, Buffer.from(r.pick([' ', '\n', 'x', '{}', ',', '\u0000', '\ufeff']))]);
    case 6:
      ops.push('empty body');
      return Buffer.alloc(0);
    default:
      ops.push('not an object');
      return Buffer.from(r.pick(['null', '[]', '"x"', '1', 'true', '[{}]', ' ', 'model=m&prompt=x']));
  }
}

const CONTENT_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json, text/plain', 'application/jsonx', '', 'application/json;;;', '\u00ff'];

function mutateHeaders(h: [string, string][], r: Rng, ops: string[]): void {
  switch (r.int(9)) {
    case 0:
      ops.push('no content-type');
      h.splice(h.findIndex(([k]) => k === 'content-type'), 1);
      break;
    case 1: {
      const ct = r.pick(CONTENT_TYPES);
      ops.push(`content-type ${JSON.stringify(ct)}`);
      h.find(([k]) => k === 'content-type')![1] = ct;
      break;
    }
    case 2:
      ops.push('accept');
      h.push(['accept', r.pick(['text/event-stream', 'application/json', '*/*', 'text/html', ''])]);
      break;
    case 3:
      ops.push('authorization');
      h.push(['authorization', r.pick(['Bearer ', 'Bearer x', 'Basic Zm9vOmJhcg==', 'x'.repeat(2000), 'Bearer \u00ff'])]);
      break;
    case 4:
      ops.push('x-request-id');
      h.push(['x-request-id', `fuzz-${r.int(1 << 30)}-${r.pick(['', ' ', '\u00e9', 'x'.repeat(500), '../../', '%00'])}`]);
      break;
    case 5:
      ops.push('anthropic headers');
      h.push(['anthropic-version', r.pick(['2023-06-01', '', 'bogus'])], ['anthropic-beta', r.pick(['tools-2024-04-04', '', ',,,'])]);
      break;
    case 6:
      ops.push('long header');
      h.push(['x-fuzz', 'y'.repeat(r.pick([1_000, 4_000, 7_000]))]);
      break;
    case 7:
      ops.push('duplicate content-type');
      h.push(['content-type', r.pick(CONTENT_TYPES)]);
      break;
    default:
      ops.push('connection close');
      h.push(['connection', 'close']);
  }
}

/** Input `r` for endpoint `ep`: a seed with 0-4 structural, 0-1 byte and 0-1 header mutations. */
export function generate(endpoints: readonly Endpoint[], r: Rng): FuzzInput {
  const endpoint = r.pick(endpoints);
  const ops: string[] = [];
  let value: unknown = structuredClone(r.pick(endpoint.seeds));
  const structural = r.pick([0, 1, 1, 1, 2, 2, 3, 4]);
  for (let i = 0; i < structural; i++) value = mutateValue(value, r, ops);
  let body: Buffer = Buffer.from(serialize(value));
  if (r.chance(0.15)) body = mutateBytes(body, r, ops);
  const headers: [string, string][] = [['content-type', 'application/json']];
  if (r.chance(0.15)) mutateHeaders(headers, r, ops);
  return { endpoint, headers, body, ops };
}
