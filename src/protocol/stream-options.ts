// `stream` with `stream_options`, shared by the OpenAI generation endpoints. Unknown keys
// inside stream_options are admitted like top-level ones (spec 000: nested objects are
// traced independently).

import { ApiError } from './errors.js';
import { admit } from './admission.js';
import { Fields, FieldTable } from './fields.js';

const STREAM_OPTION_FIELDS = ['include_usage', 'continuous_usage_stats'] as const;
let table: FieldTable<(typeof STREAM_OPTION_FIELDS)[number]> | null = null;

export interface StreamSettings {
  stream: boolean;
  /** stream_options.include_usage: a final chunk with usage and no choices. */
  includeUsage: boolean;
  /** stream_options.continuous_usage_stats: usage on every chunk. */
  continuousUsage: boolean;
}

type StreamReader = Pick<Fields<'stream' | 'stream_options'>, 'boolean' | 'object' | 'body'>;

export function readStream(f: StreamReader, ignoreUnsupported: boolean): StreamSettings {
  const stream = f.boolean('stream') ?? false;
  const so = f.object('stream_options');
  if (!so) return { stream, includeUsage: false, continuousUsage: false };
  if (!stream) throw ApiError.badRequest('`stream_options` is only allowed when `stream` is true', 'stream_options');
  table ??= new FieldTable(STREAM_OPTION_FIELDS);
  const sf = Fields.scan(f.body, table, so, 'stream_options');
  admit(sf.unknown, 'stream_options', ignoreUnsupported);
  return { stream, includeUsage: sf.boolean('include_usage') ?? false, continuousUsage: sf.boolean('continuous_usage_stats') ?? false };
}
