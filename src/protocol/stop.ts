// `stop`: a string, or up to 32 of them, non-empty; integers in the list are token ids
// (spec 001: "token_id:576" stays a literal string). Token ids join stop_token_ids.

import { ApiError } from './errors.js';
import type { Fields } from './fields.js';
import { JsonType } from './fields.js';

export const MAX_STOP_SEQUENCES = 32;

export interface StopSettings {
  strings: string[];
  tokenIds: number[];
}

export function readStop(f: Pick<Fields<'stop'>, 'type' | 'string' | 'raw'>): StopSettings {
  const t = f.type('stop');
  if (t === undefined || t === JsonType.Null) return { strings: [], tokenIds: [] };
  if (t === JsonType.String) {
    const s = f.string('stop')!;
    if (s === '') throw ApiError.badRequest('`stop` must not be an empty string', 'stop');
    return { strings: [s], tokenIds: [] };
  }
  if (t !== JsonType.Array) throw ApiError.badRequest('`stop` must be a string or an array of strings and token ids', 'stop');
  const list = JSON.parse(f.raw('stop')!) as unknown[];
  if (list.length > MAX_STOP_SEQUENCES) throw ApiError.badRequest(`\`stop\` may hold at most ${MAX_STOP_SEQUENCES} sequences, got ${list.length}`, 'stop');
  const out: StopSettings = { strings: [], tokenIds: [] };
  list.forEach((v, i) => {
    if (typeof v === 'string') {
      if (v === '') throw ApiError.badRequest(`\`stop[${i}]\` must not be empty`, 'stop');
      out.strings.push(v);
    } else if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff) out.tokenIds.push(v);
    else throw ApiError.badRequest(`\`stop[${i}]\` must be a non-empty string or a token id`, 'stop');
  });
  return out;
}
