// The request gate (native/gate, C++ on simdjson On Demand): scans a JSON request body ONCE and
// returns typed scalars + byte spans, never an object tree. See /work/shared/DESIGN.md.
//
// Usage:
//   const T = createTable(['model', 'messages', 'stream', ...]);
//   const out = new Float64Array(64 * STRIDE);              // reuse it across requests
//   const n = scan(body, 0, body.length, T, out);
//   if (n < 0) -> 400 with lastError()
//   for (let i = 0; i < n; i++) { const r = i * STRIDE; out[r + F.FIELD] ... }
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

interface GateAddon {
  createTable(names: string[]): number;
  scan(body: Uint8Array, start: number, end: number, table: number, out: Float64Array): number;
  lastError(): string;
  lastErrorMember(): string;
  implementation(): string;
}

const require = createRequire(import.meta.url);
// compiled location: dist/src/native/gate.js -> repo root is three levels up
const addon = require(
  fileURLToPath(new URL('../../../build/Release/portico_gate.node', import.meta.url)),
) as GateAddon;

/** Doubles per member record in the `out` array. */
export const STRIDE = 8;

/** Offsets inside one member record (`out[i * STRIDE + F.X]`). */
export const F = {
  /** index into the table's names, or -1 for an unknown key */
  FIELD: 0,
  /** byte span of the key's raw content (without quotes), absolute offsets into body */
  KEY_START: 1,
  KEY_END: 2,
  /** one of T.* */
  TYPE: 3,
  /** byte span of the raw JSON value; strings without their quotes */
  VAL_START: 4,
  VAL_END: 5,
  /** boolean 0/1, the number as a double, element count (array), member count (object), else 0 */
  NUM: 6,
  /** bit set of FLAG.* */
  FLAGS: 7,
} as const;

/** Value types (record slot F.TYPE). */
export const T = { NULL: 0, BOOLEAN: 1, NUMBER: 2, STRING: 3, ARRAY: 4, OBJECT: 5 } as const;

/** Flag bits (record slot F.FLAGS). */
export const FLAG = {
  /** string value contains a backslash escape (its span is raw JSON string content) */
  STRING_ESCAPED: 1,
  /** number has no fraction or exponent */
  INTEGER: 2,
  /** number is -0, or |n| > Number.MAX_SAFE_INTEGER (2^53 - 1): the double may not be exact */
  INEXACT: 4,
  /** key contains an escape (it was unescaped before matching the table) */
  KEY_ESCAPED: 8,
} as const;

/** Negative return codes of scan(). */
export const ERR = { INVALID_JSON: -1, NOT_OBJECT: -2, CAPACITY: -3 } as const;

/** Passing NO_TABLE as the table reports every key as unknown (-1). */
export const NO_TABLE = -1;

/** Creates a table of known member names for one object level; returns its id (process-wide). */
export function createTable(names: string[]): number {
  return addon.createTable(names);
}

/** After ERR.INVALID_JSON: the top-level member whose value is invalid, or '' (not inside one). */
export function lastErrorMember(): string {
  return addon.lastErrorMember();
}

/**
 * Validates the whole JSON object at body[start, end) and writes one record of STRIDE doubles per
 * member into `out`. Returns the member count, or ERR.* (< 0); then lastError() explains it.
 * Throws only on programmer errors (argument types, start/end out of range, unknown table).
 */
export function scan(body: Uint8Array, start: number, end: number, table: number, out: Float64Array): number {
  return addon.scan(body, start, end, table, out);
}

/** Message for the last failed scan() on this thread, with the absolute byte offset. */
export function lastError(): string {
  return addon.lastError();
}

/** The simdjson kernel selected at runtime for stage 1 (e.g. "haswell", "westmere", "fallback"). */
export function implementation(): string {
  return addon.implementation();
}
