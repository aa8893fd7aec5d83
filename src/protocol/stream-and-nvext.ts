// Fields shared by the OpenAI generation endpoints: `stream` with `stream_options`, and
// Portico's reading of `nvext` (spec 001). Unknown keys inside nested objects are
// traced independently of the top-level admission (spec 000).

import { ApiError } from './errors.js';
import { admit } from './admission.js';
import { Fields, FieldTable } from './fields.js';

const STREAM_OPTION_FIELDS = ['include_usage', 'continuous_usage_stats'] as const;
const NVEXT_FIELDS = ['use_raw_prompt'] as const;

let tables: { streamOptions: FieldTable<(typeof STREAM_OPTION_FIELDS)[number]>; nvext: FieldTable<(typeof NVEXT_FIELDS)[number]> } | null = null;
function getTables() {
  tables ??= { streamOptions: new FieldTable(STREAM_OPTION_FIELDS), nvext: new FieldTable(NVEXT_FIELDS) };
  return tables;
}

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
  const sf = Fields.scan(f.body, getTables().streamOptions, so, 'stream_options');
  admit(sf.unknown, 'stream_options', ignoreUnsupported);
  return { stream, includeUsage: sf.boolean('include_usage') ?? false, continuousUsage: sf.boolean('continuous_usage_stats') ?? false };
}

export interface NvExt {
  /** Tokenize the messages' contents joined, without the chat template. */
  useRawPrompt: boolean;
}

type NvextReader = Pick<Fields<'nvext'>, 'object' | 'body'>;

export function readNvext(f: NvextReader): NvExt {
  const nv = f.object('nvext');
  if (!nv) return { useRawPrompt: false };
  const nf = Fields.scan(f.body, getTables().nvext, nv, 'nvext');
  admit(nf.unknown, 'nvext', false); // unknown nvext keys are always an error
  return { useRawPrompt: nf.boolean('use_raw_prompt') ?? false };
}
