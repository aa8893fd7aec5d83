// The chat completions request as Portico reads it: scalars decoded, messages and
// tools kept as byte spans for the native template renderer. Reading, admission and
// validation happen here, before any tokenization or engine work is spent.

import { ApiError } from './errors.js';
import { admit } from './admission.js';
import { Fields, FieldTable, JsonType, type Span } from './fields.js';
import { readNvext, readStream } from './stream-and-nvext.js';
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

let table: FieldTable<ChatField> | null = null;

export interface ChatRequest {
  model: string;
  messages: Span;
  tools: Span | null;
  stream: boolean;
  includeUsage: boolean;
  continuousUsage: boolean;
  addGenerationPrompt: boolean;
  skipSpecialTokens: boolean;
  /** Raw JSON object text of chat_template_kwargs, merged into the template context. */
  templateKwargs: string | null;
  /** nvext.use_raw_prompt: tokenize the messages' contents joined, without the template. */
  useRawPrompt: boolean;
  sampling: SamplingOptions;
}

export function readChatRequest(body: Buffer, ignoreUnsupported: boolean): ChatRequest {
  table ??= new FieldTable(CHAT_FIELDS);
  const f = Fields.scan(body, table);
  admit(f.unknown, '', ignoreUnsupported);

  const model = f.string('model');
  if (model === undefined) throw ApiError.badRequest('`model` is required', 'model');
  if (model.trim() === '') throw ApiError.badRequest('`model` must not be blank', 'model');

  const messages = f.array('messages');
  if (messages === undefined) throw ApiError.badRequest('`messages` is required', 'messages');
  if (messages.length === 0) throw ApiError.badRequest('`messages` must not be empty', 'messages');

  let tools: Span | null = f.array('tools') ?? null;
  if (tools && (tools as Span & { length: number }).length === 0) tools = null;

  const { stream, includeUsage, continuousUsage } = readStream(f, ignoreUnsupported);
  const { useRawPrompt } = readNvext(f);

  if (f.given('user')) f.string('user'); // type-checked; OpenAI's end-user id, not used by generation

  const kw = f.object('chat_template_kwargs');
  return {
    model,
    messages,
    tools,
    stream,
    includeUsage,
    continuousUsage,
    addGenerationPrompt: f.boolean('add_generation_prompt') ?? true,
    skipSpecialTokens: f.boolean('skip_special_tokens') ?? true,
    templateKwargs: kw ? body.toString('utf8', kw.start, kw.end) : null,
    useRawPrompt,
    sampling: readSampling(f),
  };
}

export { JsonType };
