// The chat completions request as Portico reads it: scalars decoded, messages and
// tools kept as byte spans for the native template renderer. Reading, admission and
// validation happen here, before any tokenization or engine work is spent.

import { ApiError } from './errors.js';
import { requireModel } from './model-field.js';
import { admit } from './admission.js';
import { Fields, FieldTable, JsonType, type Span } from './fields.js';
import { readPromptEnd } from './continue-final.js';
import { readStream } from './stream-options.js';
import { readNvext, type NvExt } from './nvext.js';
import { readTools, type ToolChoice } from './tools.js';
import { toolChoiceConstraint } from './tool-choice-schema.js';
import type { GenerateConstraint } from '../engine/types.js';
import { admitUndeliverable, readChatLogprobs, readSampling, withGreedy, SAMPLING_FIELDS, type SamplingOptions } from './sampling.js';
import { THINKING_FIELDS, templateKwargsWithThinking, type GivenKwargs } from './thinking.js';

const CHAT_FIELDS = [
  'model',
  'messages',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'chat_template_kwargs',
  'chat_template_args',
  'add_generation_prompt',
  'continue_final_message',
  'skip_special_tokens',
  'user',
  'nvext',
  'cache_salt',
  'logprobs',
  'top_logprobs',
  ...THINKING_FIELDS,
  ...SAMPLING_FIELDS,
] as const;
type ChatField = (typeof CHAT_FIELDS)[number];

let table: FieldTable<ChatField> | null = null;
let kwargsTable: FieldTable<'chat_template' | 'reasoning_effort'> | null = null;

export interface ChatRequest {
  model: string;
  messages: Span;
  tools: Span | null;
  toolChoice: ToolChoice;
  toolNames: string[];
  parallelToolCalls: boolean;
  stream: boolean;
  includeUsage: boolean;
  continuousUsage: boolean;
  addGenerationPrompt: boolean;
  /** continue_final_message: the final assistant message's text the prompt ends with, or null. */
  continueFinal: string | null;
  /** skip_special_tokens as sent; undefined lets the parsers' PRE.1 decide the default. */
  skipSpecialTokens: boolean | undefined;
  /** Raw JSON object text of chat_template_kwargs, merged into the template context. */
  templateKwargs: string | null;
  /** The reasoning effort among them (the kwargs' own, else reasoning_effort), for the parsing plan. */
  reasoningEffort: string | null;
  /** nvext.use_raw_prompt: tokenize the messages' contents joined, without the template. */
  useRawPrompt: boolean;
  nvext: NvExt;
  sampling: SamplingOptions;
}

export function readChatRequest(body: Buffer, ignoreUnsupported: boolean, header: (name: string) => string): ChatRequest {
  table ??= new FieldTable(CHAT_FIELDS);
  const f = Fields.scan(body, table);
  admit(f.unknown, '', ignoreUnsupported);
  admitUndeliverable(f, ignoreUnsupported);

  const model = requireModel(f);

  const messages = f.array('messages');
  if (messages === undefined) throw ApiError.badRequest('`messages` is required', 'messages');
  if (messages.length === 0) throw ApiError.badRequest('`messages` must not be empty', 'messages');

  const { tools, toolChoice, toolNames, functions, parallelToolCalls } = readTools(f);
  // PRE.4: required / named ask the engine for guided JSON (the parsers read it back)
  const toolConstraint = tools ? toolChoiceConstraint(functions, toolChoice, parallelToolCalls) : undefined;

  const { stream, includeUsage, continuousUsage } = readStream(f, ignoreUnsupported);
  const nvext = readNvext(f, header, f.string('cache_salt'), undefined, ignoreUnsupported);

  if (f.given('user')) f.string('user'); // type-checked; OpenAI's end-user id, not used by generation

  const kwargs = templateKwargsWithThinking(f, readTemplateKwargs(f, body));
  const end = readPromptEnd(f.boolean('continue_final_message'), f.boolean('add_generation_prompt'), () => body.toString('utf8', messages.start, messages.end));
  return {
    model,
    messages,
    tools,
    toolChoice,
    toolNames,
    parallelToolCalls,
    stream,
    includeUsage,
    continuousUsage,
    addGenerationPrompt: end.addGenerationPrompt,
    continueFinal: end.continueFinal,
    skipSpecialTokens: f.boolean('skip_special_tokens'),
    templateKwargs: kwargs.text,
    reasoningEffort: kwargs.reasoningEffort,
    useRawPrompt: nvext.useRawPrompt,
    nvext,
    sampling: withToolConstraint(withChatLogprobs(withGreedy(readSampling(f), nvext), readChatLogprobs(f)), toolConstraint),
  };
}

/** The chat logprobs fields set on sampling options that are this request's own (fresh) object. */
function withChatLogprobs(s: SamplingOptions, lp: { logprobs?: boolean; topLogprobs?: number }): SamplingOptions {
  s.logprobs = lp.logprobs;
  s.topLogprobs = lp.topLogprobs;
  return s;
}

/** tool_choice required / named constrain the output: no other constraint may. */
function withToolConstraint(sampling: SamplingOptions, c: GenerateConstraint | undefined): SamplingOptions {
  if (!c) return sampling;
  if (sampling.constraint) {
    throw ApiError.badRequest(
      '`tool_choice` "required" or a named function already constrains the output to tool-call JSON; it cannot be combined with `response_format` or `guided_*`',
      'tool_choice',
    );
  }
  return { ...sampling, constraint: c };
}

/**
 * chat_template_args (vLLM) or its alias chat_template_kwargs: extra variables for the
 * template, as raw JSON object text. It may not replace the template itself.
 */
function readTemplateKwargs(f: Fields<ChatField>, body: Buffer): GivenKwargs | null {
  if (f.given('chat_template_args') && f.given('chat_template_kwargs')) {
    throw ApiError.badRequest('give either `chat_template_args` or `chat_template_kwargs`, not both', 'chat_template_args');
  }
  const name = f.given('chat_template_args') ? 'chat_template_args' : 'chat_template_kwargs';
  const span = f.object(name);
  if (!span) return null;
  kwargsTable ??= new FieldTable(['chat_template', 'reasoning_effort'] as const);
  const kf = Fields.scan(body, kwargsTable, span, name);
  if (kf.has('chat_template')) throw ApiError.badRequest(`\`${name}\` may not contain \`chat_template\``, name);
  // Scanned here once: the parsing plan reads the effort from the request (PRE.2).
  const effortType = kf.type('reasoning_effort');
  const reasoningEffort = effortType === undefined ? undefined : effortType === JsonType.String ? kf.string('reasoning_effort')! : null;
  return { text: body.toString('utf8', span.start, span.end), reasoningEffort };
}

