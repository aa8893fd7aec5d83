// The embeddings request (POST /v1/embeddings), as OpenAI defines it: `input` as a
// string, an array of strings, an array of token ids, or an array of token id arrays;
// `encoding_format` float (default) or base64; `dimensions`; `user`. nvext carries
// the routing inputs as on the generation endpoints.

import { ApiError } from './errors.js';
import { requireModel } from './model-field.js';
import { admit } from './admission.js';
import { Fields, FieldTable } from './fields.js';
import { readTextOrIds, type TextOrIds } from './text-or-ids.js';
import { readNvext, type NvExt } from './nvext.js';
import { integerIn, U32_MAX } from './sampling.js';

const EMBEDDING_FIELDS = ['model', 'input', 'encoding_format', 'dimensions', 'user', 'nvext'] as const;
type EmbeddingField = (typeof EMBEDDING_FIELDS)[number];

let table: FieldTable<EmbeddingField> | null = null;

/** OpenAI's limit on inputs per request. */
export const MAX_EMBEDDING_INPUTS = 2048;

export type EmbeddingInput = TextOrIds;

export interface EmbeddingRequest {
  model: string;
  inputs: EmbeddingInput[];
  encodingFormat: 'float' | 'base64';
  /** Truncate each vector to this many leading values and renormalise (Matryoshka). */
  dimensions?: number;
  nvext: NvExt;
}

export function readEmbeddingRequest(body: Buffer, ignoreUnsupported: boolean, header: (name: string) => string): EmbeddingRequest {
  table ??= new FieldTable(EMBEDDING_FIELDS);
  const f = Fields.scan(body, table);
  admit(f.unknown, '', ignoreUnsupported);
  const model = requireModel(f);
  const inputs = readTextOrIds(f, 'input', MAX_EMBEDDING_INPUTS);
  const format = f.string('encoding_format') ?? 'float';
  if (format !== 'float' && format !== 'base64') {
    throw ApiError.badRequest(`\`encoding_format\` must be "float" or "base64", got ${JSON.stringify(format)}`, 'encoding_format');
  }
  const dimensions = f.integer('dimensions');
  if (dimensions !== undefined && dimensions < 1) throw ApiError.badRequest(`\`dimensions\` must be at least 1, got ${dimensions}`, 'dimensions');
  integerIn('dimensions', dimensions, 1, U32_MAX, 'a 32-bit unsigned integer');
  if (f.given('user')) f.string('user');
  return { model, inputs, encodingFormat: format, dimensions, nvext: readNvext(f, header, undefined, undefined, ignoreUnsupported) };
}
