// The KServe v2 tensor codec: an input tensor's elements, read from its typed `contents`
// or from its entry of `raw_input_contents` (little-endian, BYTES elements each behind a
// 4-byte little-endian length), after checking that the element count matches the shape;
// and the raw encoding of the output tensors Portico returns. Every fault is a 400
// (INVALID_ARGUMENT on the wire) whose message names the tensor.

import { ApiError } from '../protocol/errors.js';
import type { InferTensorContents } from '../gen/kserve/grpc_service_pb.js';

/** One input tensor as the request gave it, with its raw bytes when the request used raw_input_contents. */
export interface InputTensor {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly bigint[];
  readonly contents?: InferTensorContents;
  readonly raw?: Uint8Array;
}

export function tensorError(name: string, what: string): ApiError {
  return ApiError.badRequest(`input tensor \`${name}\`: ${what}`, name);
}

/** The element count the shape implies (every dimension at least 0). */
export function elementCount(t: InputTensor): number {
  let n = 1;
  for (const d of t.shape) {
    if (d < 0n) throw tensorError(t.name, `shape [${t.shape.join(', ')}] has a negative dimension`);
    n *= Number(d);
  }
  return n;
}

function counted<T>(t: InputTensor, values: T[]): T[] {
  const want = elementCount(t);
  if (values.length !== want) throw tensorError(t.name, `shape [${t.shape.join(', ')}] holds ${want} element(s), the data has ${values.length}`);
  return values;
}

function view(raw: Uint8Array): DataView {
  return new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
}

function fixedWidth(t: InputTensor, raw: Uint8Array, width: number): number {
  if (raw.byteLength % width !== 0) throw tensorError(t.name, `raw contents of ${raw.byteLength} bytes are not a whole number of ${t.datatype} elements (${width} bytes each)`);
  return raw.byteLength / width;
}

/** BYTES elements: each raw element is a 4-byte little-endian length, then that many bytes. */
export function readBytes(t: InputTensor): Uint8Array[] {
  if (!t.raw) return counted(t, t.contents?.bytesContents ?? []);
  const raw = t.raw;
  const dv = view(raw);
  const out: Uint8Array[] = [];
  for (let at = 0; at < raw.byteLength; ) {
    if (at + 4 > raw.byteLength) throw tensorError(t.name, 'raw BYTES contents end inside an element\'s 4-byte length prefix');
    const len = dv.getUint32(at, true);
    at += 4;
    if (at + len > raw.byteLength) throw tensorError(t.name, `raw BYTES element of ${len} bytes runs past the end of the contents`);
    out.push(raw.subarray(at, at + len));
    at += len;
  }
  return counted(t, out);
}

/** Integer elements (INT32, UINT32, INT64, UINT64), as exact numbers. */
export function readIntegers(t: InputTensor): number[] {
  const c = t.contents;
  const raw = t.raw;
  let out: number[];
  switch (t.datatype) {
    case 'INT32':
      if (raw) {
        const dv = view(raw);
        out = Array.from({ length: fixedWidth(t, raw, 4) }, (_, i) => dv.getInt32(i * 4, true));
      } else out = c?.intContents ?? [];
      break;
    case 'UINT32':
      if (raw) {
        const dv = view(raw);
        out = Array.from({ length: fixedWidth(t, raw, 4) }, (_, i) => dv.getUint32(i * 4, true));
      } else out = c?.uintContents ?? [];
      break;
    case 'INT64':
    case 'UINT64': {
      let big: bigint[];
      if (raw) {
        const dv = view(raw);
        const signed = t.datatype === 'INT64';
        big = Array.from({ length: fixedWidth(t, raw, 8) }, (_, i) => (signed ? dv.getBigInt64(i * 8, true) : dv.getBigUint64(i * 8, true)));
      } else big = (t.datatype === 'INT64' ? c?.int64Contents : c?.uint64Contents) ?? [];
      out = big.map((v) => {
        if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw tensorError(t.name, `value ${v} is out of range`);
        return Number(v);
      });
      break;
    }
    default:
      throw new Error(`readIntegers: ${t.datatype}`);
  }
  return counted(t, out);
}

/** Floating-point elements (FP32, FP64). */
export function readFloats(t: InputTensor): number[] {
  const raw = t.raw;
  const fp32 = t.datatype === 'FP32';
  if (!raw) return counted(t, (fp32 ? t.contents?.fp32Contents : t.contents?.fp64Contents) ?? []);
  const dv = view(raw);
  const w = fp32 ? 4 : 8;
  return counted(t, Array.from({ length: fixedWidth(t, raw, w) }, (_, i) => (fp32 ? dv.getFloat32(i * w, true) : dv.getFloat64(i * w, true))));
}

/** BOOL elements (one byte each when raw). */
export function readBools(t: InputTensor): boolean[] {
  if (!t.raw) return counted(t, t.contents?.boolContents ?? []);
  return counted(t, Array.from(t.raw, (b) => b !== 0));
}

/** BYTES elements in the raw layout: each behind its 4-byte little-endian length. */
export function bytesRaw(elements: readonly (string | Uint8Array)[]): Uint8Array {
  const parts = elements.map((e) => (typeof e === 'string' ? Buffer.from(e, 'utf8') : e));
  const out = Buffer.allocUnsafe(parts.reduce((s, p) => s + 4 + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.writeUInt32LE(p.byteLength, at);
    out.set(p, at + 4);
    at += 4 + p.byteLength;
  }
  return out;
}

/** INT32 elements in the raw layout (little-endian). */
export function int32Raw(values: readonly number[]): Uint8Array {
  const out = Buffer.allocUnsafe(values.length * 4);
  for (let i = 0; i < values.length; i++) out.writeInt32LE(values[i], i * 4);
  return out;
}
