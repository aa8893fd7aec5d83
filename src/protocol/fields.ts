// Typed access to the members of one JSON object level, as reported by the native
// gate (src/native/gate.ts). The body stays a Buffer: strings are decoded only when a
// handler asks for them, and nested values are handed on as byte spans.

import { scan, lastError, lastErrorMember, createTable, STRIDE, NO_TABLE } from '../native/gate.js';
import { ApiError } from './errors.js';

/** The gate's value type codes. */
export enum JsonType {
  Null = 0,
  Boolean = 1,
  Number = 2,
  String = 3,
  Array = 4,
  Object = 5,
}

export interface Span {
  start: number;
  end: number;
}

const MAX_MEMBERS = 512;

/** Up to this many members, a field is found by a walk over the records (see Fields.slot). */
const WALK_MAX = 16;

/**
 * The gate writes every scan's records here; a Fields keeps a copy of only the records it
 * got (a few hundred bytes) instead of a fresh 32 KiB array per object scanned. scan() is
 * synchronous, so one buffer per thread is enough.
 */
const scratch = new Float64Array(MAX_MEMBERS * STRIDE);

/** A copy of the first `n` records of the scratch buffer (see Fields' fields). */
function records(n: number): number[] {
  const len = n * STRIDE;
  const out = new Array<number>(len);
  for (let i = 0; i < len; i++) out[i] = scratch[i]!;
  return out;
}

/** A set of known member names for one object level, compiled once into a gate table. */
export class FieldTable<N extends string> {
  readonly id: number;
  readonly names: readonly N[];
  private readonly index: Map<string, number>;

  constructor(names: readonly N[]) {
    this.names = names;
    this.id = createTable([...names]);
    this.index = new Map(names.map((n, i) => [n, i]));
  }

  indexOf(name: N): number {
    const i = this.index.get(name);
    if (i === undefined) throw new Error(`field ${name} is not in this table`);
    return i;
  }
}

/**
 * Validates a whole body as one JSON object with the gate, as Fields.scan does for the API
 * bodies: the same nesting limit (512), the same rejection of lone-surrogate escapes and the
 * same 400s. For the small bodies that are then read with JSON.parse (src/api/json-body.ts):
 * without it, a body nested 10,000 deep parses, then overflows the stack in the first
 * recursive walk (JSON.stringify), and a "\uD800" reaches serde_json, which rejects it.
 */
export function checkJsonObject(body: Buffer): void {
  const n = scan(body, 0, body.length, NO_TABLE, scratch);
  if (n >= 0) return;
  if (n === -2) throw ApiError.badRequest('request body must be a JSON object', null, 'invalid_json');
  if (n === -3) throw ApiError.badRequest('too many fields in the request body');
  throw invalidJson('');
}

/** The 400 for a body the gate refused; `param` names the member whose value is invalid. */
function invalidJson(path: string): ApiError {
  const member = lastErrorMember();
  const param = member ? (path ? `${path}.${member}` : member) : null;
  return ApiError.badRequest(`invalid JSON in request body: ${lastError()}`, param, 'invalid_json');
}

export class Fields<N extends string> {
  // Plain arrays, not typed ones: these are made per object scanned (a few per request), and a
  // typed array past 64 bytes is an off-heap allocation (~300 ns each, and work for V8's
  // ArrayBuffer sweeper) where an array of numbers is ~40-115 ns (bench/fields-scan.bench.ts).
  // Table index -> record offset in out (or -1), only for objects of many members: the few
  // members of a usual request are found by a walk over the records, and a lone request does
  // not pay for an array as long as the table (~45 names for chat) and its fill.
  private readonly slot: number[] | null = null;
  private readonly out: number[];
  readonly unknown: string[] = [];
  readonly count: number;

  private constructor(
    readonly body: Buffer,
    readonly table: FieldTable<N>,
    readonly path: string,
    out: number[],
    count: number,
  ) {
    this.out = out;
    this.count = count;
    let slot: number[] | null = null;
    if (count > WALK_MAX) {
      slot = this.slot = [];
      for (let i = 0; i < table.names.length; i++) slot.push(-1);
    }
    for (let i = 0; i < count; i++) {
      const o = i * STRIDE;
      const idx = out[o];
      if (idx >= 0) {
        if (slot !== null) slot[idx] = o; // the last occurrence wins, as with JSON.parse
      } else {
        this.unknown.push(this.decodeKey(o));
      }
    }
  }

  /**
   * Scan the object at body[span] against a table. Throws a 400 for malformed JSON or a
   * value that is not an object. `path` names the object in error messages ('' = the body).
   */
  static scan<N extends string>(body: Buffer, table: FieldTable<N>, span: Span | null = null, path = ''): Fields<N> {
    const start = span ? span.start : 0;
    const end = span ? span.end : body.length;
    const n = scan(body, start, end, table.id, scratch);
    if (n >= 0) return new Fields(body, table, path, records(n), n);
    if (n === -2) {
      throw ApiError.badRequest(path ? `\`${path}\` must be an object` : 'request body must be a JSON object', path || null, 'invalid_json');
    }
    if (n === -3) throw ApiError.badRequest(`too many fields in ${path || 'the request body'}`, path || null);
    throw invalidJson(path);
  }

  private decodeKey(o: number): string {
    const s = this.out[o + 1];
    const e = this.out[o + 2];
    const flags = this.out[o + 7];
    if (flags & 8) return JSON.parse(this.body.toString('utf8', s - 1, e + 1)) as string;
    return this.body.toString('utf8', s, e);
  }

  private qualified(name: string): string {
    return this.path ? `${this.path}.${name}` : name;
  }

  private rec(name: N): number {
    const idx = this.table.indexOf(name);
    if (this.slot !== null) return this.slot[idx];
    // The last occurrence wins, as with JSON.parse.
    const out = this.out;
    for (let o = (this.count - 1) * STRIDE; o >= 0; o -= STRIDE) if (out[o] === idx) return o;
    return -1;
  }

  has(name: N): boolean {
    return this.rec(name) >= 0;
  }

  /** The JSON type of a member, or undefined when absent. */
  type(name: N): JsonType | undefined {
    const o = this.rec(name);
    return o < 0 ? undefined : (this.out[o + 3] as JsonType);
  }

  /** Present and not null. */
  given(name: N): boolean {
    const t = this.type(name);
    return t !== undefined && t !== JsonType.Null;
  }

  private typeError(name: N, expected: string): ApiError {
    const q = this.qualified(name);
    return ApiError.badRequest(`\`${q}\` must be ${expected}`, q);
  }

  string(name: N): string | undefined {
    const o = this.rec(name);
    if (o < 0 || this.out[o + 3] === JsonType.Null) return undefined;
    if (this.out[o + 3] !== JsonType.String) throw this.typeError(name, 'a string');
    const s = this.out[o + 4];
    const e = this.out[o + 5];
    if ((this.out[o + 7] & 1) === 0) return this.body.toString('utf8', s, e);
    return JSON.parse(this.body.toString('utf8', s - 1, e + 1)) as string;
  }

  number(name: N): number | undefined {
    const o = this.rec(name);
    if (o < 0 || this.out[o + 3] === JsonType.Null) return undefined;
    if (this.out[o + 3] !== JsonType.Number) throw this.typeError(name, 'a number');
    return this.out[o + 6];
  }

  integer(name: N): number | undefined {
    const o = this.rec(name);
    if (o < 0 || this.out[o + 3] === JsonType.Null) return undefined;
    if (this.out[o + 3] !== JsonType.Number || (this.out[o + 7] & 2) === 0) throw this.typeError(name, 'an integer');
    return this.out[o + 6];
  }

  boolean(name: N): boolean | undefined {
    const o = this.rec(name);
    if (o < 0 || this.out[o + 3] === JsonType.Null) return undefined;
    if (this.out[o + 3] !== JsonType.Boolean) throw this.typeError(name, 'a boolean');
    return this.out[o + 6] !== 0;
  }

  /** Byte span of an array member (brackets included), or undefined when absent or null. */
  array(name: N): (Span & { length: number }) | undefined {
    const o = this.rec(name);
    if (o < 0 || this.out[o + 3] === JsonType.Null) return undefined;
    if (this.out[o + 3] !== JsonType.Array) throw this.typeError(name, 'an array');
    return { start: this.out[o + 4], end: this.out[o + 5], length: this.out[o + 6] };
  }

  /** Byte span of an object member (braces included), or undefined when absent or null. */
  object(name: N): Span | undefined {
    const o = this.rec(name);
    if (o < 0 || this.out[o + 3] === JsonType.Null) return undefined;
    if (this.out[o + 3] !== JsonType.Object) throw this.typeError(name, 'an object');
    return { start: this.out[o + 4], end: this.out[o + 5] };
  }

  /** Raw JSON text of any member, or undefined when absent. */
  raw(name: N): string | undefined {
    const o = this.rec(name);
    if (o < 0) return undefined;
    const t = this.out[o + 3];
    const s = this.out[o + 4];
    const e = this.out[o + 5];
    return t === JsonType.String ? this.body.toString('utf8', s - 1, e + 1) : this.body.toString('utf8', s, e);
  }
}
