// The embeddings request (POST /v1/embeddings), as OpenAI defines it: `input` as a
// string, an array of strings, an array of token ids, or an array of token id arrays;
// `encoding_format` float (default) or base64; `dimensions`; `user`. nvext carries
// the routing inputs as on the generation endpoints.

import { ApiError } from './errors.js';
import { requireModel } from './model-field.js';
import { admit } from './admission.js';
import { Fields, FieldTable, JsonType } from './fields.js';
import { readNvext, type NvExt } from './nvext.js';

const EMBEDDING_FIELDS = ['model', 'input', 'encoding_format', 'dimensions', 'user', 'nvext'] as const;
type EmbeddingField = (typeof EMBEDDING_FIELDS)[number];

let table: FieldTable<EmbeddingField> | null = null;

/** OpenAI's limit on inputs per request. */
export const MAX_EMBEDDING_INPUTS = 2048;

export type EmbeddingInput = { kind: 'text'; text: string } | { kind: 'ids'; ids: Uint32Array };

export interface EmbeddingRequest {
  model: string;
  inputs: EmbeddingInput[];
  encodingFormat: 'float' | 'base64';
  /** Truncate each vector to this many leading values and renormalise (Matryoshka). */
  dimensions?: number;
  nvext: NvExt;
}

function bad(message: string): ApiError {
  return ApiError.badRequest(message, 'input');
}

export function readEmbeddingRequest(body: Buffer, ignoreUnsupported: boolean, header: (name: string) => string): EmbeddingRequest {
  table ??= new FieldTable(EMBEDDING_FIELDS);
  const f = Fields.scan(body, table);
  admit(f.unknown, '', ignoreUnsupported);
  const model = requireModel(f);
  const inputs = readInputs(f);
  const format = f.string('encoding_format') ?? 'float';
  if (format !== 'float' && format !== 'base64') {
    throw ApiError.badRequest(`\`encoding_format\` must be "float" or "base64", got ${JSON.stringify(format)}`, 'encoding_format');
  }
  const dimensions = f.integer('dimensions');
  if (dimensions !== undefined && dimensions < 1) throw ApiError.badRequest(`\`dimensions\` must be at least 1, got ${dimensions}`, 'dimensions');
  if (f.given('user')) f.string('user');
  return { model, inputs, encodingFormat: format, dimensions, nvext: readNvext(f, header, undefined) };
}

function readInputs(f: Fields<EmbeddingField>): EmbeddingInput[] {
  const t = f.type('input');
  if (t === undefined || t === JsonType.Null) throw bad('`input` is required');
  if (t === JsonType.String) {
    const text = f.string('input')!;
    if (text === '') throw bad('`input` must not be an empty string');
    return [{ kind: 'text', text }];
  }
  if (t !== JsonType.Array) throw bad('`input` must be a string, an array of strings, an array of token ids, or an array of token id arrays');
  const list = JSON.parse(f.raw('input')!) as unknown[];
  if (list.length === 0) throw bad('`input` must not be empty');
  if (list.every((v) => typeof v === 'number')) return [{ kind: 'ids', ids: tokenIds(list, 'input') }];
  if (list.length > MAX_EMBEDDING_INPUTS) throw bad(`\`input\` holds ${list.length} inputs; at most ${MAX_EMBEDDING_INPUTS} are allowed`);
  return list.map((v, i): EmbeddingInput => {
    const name = `input[${i}]`;
    if (typeof v === 'string') {
      if (v === '') throw bad(`\`${name}\` must not be an empty string`);
      return { kind: 'text', text: v };
    }
    if (Array.isArray(v)) {
      if (v.length === 0) throw bad(`\`${name}\` must not be empty`);
      return { kind: 'ids', ids: tokenIds(v, name) };
    }
    throw bad(`\`${name}\` must be a string or an array of token ids, got ${v === null ? 'null' : typeof v}`);
  });
}

function tokenIds(list: unknown[], name: string): Uint32Array {
  const ids = new Uint32Array(list.length);
  list.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw bad(`\`${name}\` must hold non-negative integer token ids; item ${i} is ${JSON.stringify(v)}`);
    }
    ids[i] = v;
  });
  return ids;
}
