// The chat completions request as Portico reads it: scalars decoded, messages and
// tools kept as byte spans for the native template renderer. Reading, admission and
// validation happen here, before any tokenization or engine work is spent.

import { ApiError } from './errors.js';
import { admit } from './admission.js';
import { Fields, FieldTable, JsonType, type Span } from './fields.js';
import { readSampling, SAMPLING_FIELDS, type SamplingOptions } from './sampling.js';

const CHAT_FIELDS = [
  'model',
  'messages',
  'stream',
  'stream_options',
  'tools',
  'chat_template_kwargs',
  'add_generation_prompt',
  'skip_special_tokens',
  'user',
  'nvext',
  ...SAMPLING_FIELDS,
] as const;
type ChatField = (typeof CHAT_FIELDS)[number];

const STREAM_OPTION_FIELDS = ['include_usage'] as const;
const NVEXT_FIELDS = ['use_raw_prompt'] as const;

let tables: {
  chat: FieldTable<ChatField>;
  streamOptions: FieldTable<(typeof STREAM_OPTION_FIELDS)[number]>;
  nvext: FieldTable<(typeof NVEXT_FIELDS)[number]>;
} | null = null;

function getTables() {
  tables ??= {
    chat: new FieldTable(CHAT_FIELDS),
    streamOptions: new FieldTable(STREAM_OPTION_FIELDS),
    nvext: new FieldTable(NVEXT_FIELDS),
  };
  return tables;
}

export interface ChatRequest {
  model: string;
  messages: Span;
  tools: Span | null;
  stream: boolean;
  includeUsage: boolean;
  addGenerationPrompt: boolean;
  skipSpecialTokens: boolean;
  /** Raw JSON object text of chat_template_kwargs, merged into the template context. */
  templateKwargs: string | null;
  /** nvext.use_raw_prompt: tokenize the messages' contents joined, without the template. */
  useRawPrompt: boolean;
  sampling: SamplingOptions;
}

export function readChatRequest(body: Buffer, ignoreUnsupported: boolean): ChatRequest {
  const t = getTables();
  const f = Fields.scan(body, t.chat);
  admit(f.unknown, '', ignoreUnsupported);

  const model = f.string('model');
  if (model === undefined) throw ApiError.badRequest('`model` is required', 'model');
  if (model.trim() === '') throw ApiError.badRequest('`model` must not be blank', 'model');

  const messages = f.array('messages');
  if (messages === undefined) throw ApiError.badRequest('`messages` is required', 'messages');
  if (messages.length === 0) throw ApiError.badRequest('`messages` must not be empty', 'messages');

  let tools: Span | null = f.array('tools') ?? null;
  if (tools && (tools as Span & { length: number }).length === 0) tools = null;

  const stream = f.boolean('stream') ?? false;
  let includeUsage = false;
  const so = f.object('stream_options');
  if (so) {
    if (!stream) throw ApiError.badRequest('`stream_options` is only allowed when `stream` is true', 'stream_options');
    const sf = Fields.scan(body, t.streamOptions, so, 'stream_options');
    admit(sf.unknown, 'stream_options', ignoreUnsupported);
    includeUsage = sf.boolean('include_usage') ?? false;
  }

  let useRawPrompt = false;
  const nv = f.object('nvext');
  if (nv) {
    const nf = Fields.scan(body, t.nvext, nv, 'nvext');
    admit(nf.unknown, 'nvext', false); // unknown nvext keys are always an error
    useRawPrompt = nf.boolean('use_raw_prompt') ?? false;
  }

  if (f.given('user')) f.string('user'); // type-checked; OpenAI's end-user id, not used by generation

  const kw = f.object('chat_template_kwargs');
  return {
    model,
    messages,
    tools,
    stream,
    includeUsage,
    addGenerationPrompt: f.boolean('add_generation_prompt') ?? true,
    skipSpecialTokens: f.boolean('skip_special_tokens') ?? true,
    templateKwargs: kw ? body.toString('utf8', kw.start, kw.end) : null,
    useRawPrompt,
    sampling: readSampling(f),
  };
}

export { JsonType };
