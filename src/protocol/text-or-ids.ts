// A field that takes text or token ids, as OpenAI's completions `prompt` and embeddings
// `input` do: a string, an array of strings, an array of token ids, or an array of token
// id arrays. Read into one item per text or id list; every malformed shape is a 400
// that names the field (and the item).

import { ApiError } from './errors.js';
import { JsonType, type Fields } from './fields.js';

export type TextOrIds = { kind: 'text'; text: string } | { kind: 'ids'; ids: Uint32Array };

/** Reads `field`; a batch holds at most `maxItems` items when given. */
export function readTextOrIds<N extends string>(f: Fields<N>, field: N, maxItems?: number): TextOrIds[] {
  const bad = (message: string) => ApiError.badRequest(message, field);
  const t = f.type(field);
  if (t === undefined || t === JsonType.Null) throw bad(`\`${field}\` is required`);
  if (t === JsonType.String) {
    const text = f.string(field)!;
    if (text === '') throw bad(`\`${field}\` must not be an empty string`);
    return [{ kind: 'text', text }];
  }
  if (t !== JsonType.Array) throw bad(`\`${field}\` must be a string, an array of strings, an array of token ids, or an array of token id arrays`);
  const list = JSON.parse(f.raw(field)!) as unknown[];
  if (list.length === 0) throw bad(`\`${field}\` must not be empty`);
  if (list.every((v) => typeof v === 'number')) return [{ kind: 'ids', ids: tokenIds(list, field, bad) }];
  if (maxItems !== undefined && list.length > maxItems) throw bad(`\`${field}\` holds ${list.length} inputs; at most ${maxItems} are allowed`);
  return list.map((v, i): TextOrIds => {
    const name = `${field}[${i}]`;
    if (typeof v === 'string') {
      if (v === '') throw bad(`\`${name}\` must not be an empty string`);
      return { kind: 'text', text: v };
    }
    if (Array.isArray(v)) {
      if (v.length === 0) throw bad(`\`${name}\` must not be empty`);
      return { kind: 'ids', ids: tokenIds(v, name, bad) };
    }
    throw bad(`\`${name}\` must be a string or an array of token ids, got ${v === null ? 'null' : typeof v}`);
  });
}

function tokenIds(list: unknown[], name: string, bad: (message: string) => ApiError): Uint32Array {
  const ids = new Uint32Array(list.length);
  list.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw bad(`\`${name}\` must hold non-negative integer token ids; item ${i} is ${JSON.stringify(v)}`);
    }
    ids[i] = v;
  });
  return ids;
}
