// The OpenAI Responses request (POST /v1/responses), read and validated, then reshaped
// into chat-template messages: `instructions` as the system message, input messages
// (string or input_text/output_text parts), reasoning items as the next assistant
// turn's reasoning_content, function_call items as assistant tool calls,
// function_call_output items as tool messages. Runs through the chat pipeline.

import { ApiError } from './errors.js';
import { requireModel } from './model-field.js';
import { isObject as isObj, type Json, type JsonObject as Obj } from './json.js';
import { admit } from './admission.js';
import { Fields, FieldTable, JsonType } from './fields.js';
import { templateBody, type TemplateBody } from './template-body.js';
import { IMAGE_MARKER, responsesImageUrl, type ImageInput } from './image-input.js';
import { readNvext, type NvExt } from './nvext.js';
import type { ToolChoice } from './tools.js';
import { readResponsesToolChoice } from './responses-tool-choice.js';
import { toolChoiceConstraint } from './tool-choice-schema.js';
import type { ToolFunction } from './tools.js';
import { readResponsesReasoning, readResponsesText } from './responses-format.js';
import { integerIn, MAX_TOP_LOGPROBS, U32_MAX } from './sampling.js';
import { OUTPUT_TEXT_LOGPROBS, readInclude } from './responses-include.js';
import type { GenerateConstraint } from '../engine/types.js';

const RESPONSES_FIELDS = [
  'model',
  'input',
  'instructions',
  'max_output_tokens',
  'temperature',
  'top_p',
  'stream',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'store',
  'metadata',
  'user',
  'previous_response_id',
  'nvext',
  'text',
  'reasoning',
  'include',
  'top_logprobs',
] as const;

let table: FieldTable<(typeof RESPONSES_FIELDS)[number]> | null = null;

export interface ResponsesRequest {
  model: string;
  prompt: TemplateBody;
  instructions: string | null;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  stream: boolean;
  /** The request's tools and settings, echoed back in the response object. */
  tools: unknown[];
  toolChoice: unknown;
  /** tool_choice as the pipeline reads it (none: tools rendered, no tool parsing). */
  toolMode: ToolChoice;
  parallelToolCalls: boolean;
  metadata: Record<string, unknown>;
  /** Routing extensions (nvext and the routing headers), as on chat completions. */
  nvext: NvExt;
  /** text.format as a constraint (json_object / json_schema), or tool_choice required / named as guided tool-call JSON. */
  constraint?: GenerateConstraint;
  /** `text` and `reasoning` as the response object echoes them. */
  text: { format: Record<string, unknown> };
  reasoning: { effort: string | null; summary: string | null };
  /** `store` (default true, as OpenAI): keep the response for retrieval and chaining. */
  store: boolean;
  previousResponseId: string | null;
  include: string[];
  /** include has message.output_text.logprobs: the engine's logprobs on output_text. */
  logprobs: boolean;
  /** Alternatives per output_text token, 0..20 (OpenAI's top_logprobs; echoed in the response). */
  topLogprobs: number;
  /** The input as items (a string input is one user message), as stored and listed by input_items. */
  input: Obj[];
  /** What conversationPrompt (responses-chain.ts) needs to render the chain before the input. */
  template: { tools: Obj[]; kwargs: string | null };
}

function bad(message: string, param: string | null = null): ApiError {
  return ApiError.badRequest(message, param);
}

export function readResponsesRequest(body: Buffer, ignoreUnsupported: boolean, header: (name: string) => string = () => ''): ResponsesRequest {
  table ??= new FieldTable(RESPONSES_FIELDS);
  const f = Fields.scan(body, table);
  admit(f.unknown, '', ignoreUnsupported);
  const model = requireModel(f);
  const previousResponseId = f.given('previous_response_id') ? (f.string('previous_response_id') ?? null) : null;
  if (previousResponseId === '') throw bad('`previous_response_id` must not be empty', 'previous_response_id');
  const include = readInclude(f.given('include') ? (JSON.parse(f.raw('include')!) as Json) : undefined, ignoreUnsupported);
  const topLogprobs = integerIn('top_logprobs', f.integer('top_logprobs'), 0, MAX_TOP_LOGPROBS, 'an integer') ?? 0;
  const maxOutputTokens = f.integer('max_output_tokens');
  if (maxOutputTokens !== undefined && maxOutputTokens < 1) throw bad(`\`max_output_tokens\` must be at least 1, got ${maxOutputTokens}`, 'max_output_tokens');
  integerIn('max_output_tokens', maxOutputTokens, 1, U32_MAX, 'a 32-bit unsigned integer');
  const temperature = f.number('temperature');
  if (temperature !== undefined && (temperature < 0 || temperature > 2)) throw bad(`\`temperature\` must be at least 0 and at most 2, got ${temperature}`, 'temperature');
  const topP = f.number('top_p');
  if (topP !== undefined && (topP < 0 || topP > 1)) throw bad(`\`top_p\` must be at least 0 and at most 1, got ${topP}`, 'top_p');
  if (f.given('user')) f.string('user');
  const store = f.boolean('store') ?? true;
  const instructions = f.string('instructions') ?? null;

  const messages: Obj[] = [];
  const images: ImageInput[] = [];
  if (instructions !== null) messages.push({ role: 'system', content: instructions });
  const t = f.type('input');
  let input: Obj[];
  if (t === undefined || t === JsonType.Null) throw bad('`input` is required', 'input');
  if (t === JsonType.String) {
    const text = f.string('input')!;
    messages.push({ role: 'user', content: text });
    input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }];
  } else if (t === JsonType.Array) {
    const items = JSON.parse(f.raw('input')!) as Json[];
    if (items.length === 0) throw bad('`input` must not be empty', 'input');
    items.forEach((item, i) => appendItem(messages, item, i, images));
    input = items as Obj[];
  } else throw bad('`input` must be a string or an array of input items', 'input');

  const tools = f.array('tools') ? (JSON.parse(f.raw('tools')!) as Json[]) : [];
  const chatTools = tools.map((tool, i) => {
    if (!isObj(tool) || tool.type !== 'function') throw bad(`\`tools[${i}]\`: only function tools are supported`, 'tools');
    if (typeof tool.name !== 'string' || tool.name === '') throw bad(`\`tools[${i}].name\` is required`, 'tools');
    // OpenAI's key order (name, description, parameters): the template renders tools as JSON.
    const fn: Obj = { name: tool.name };
    if (typeof tool.description === 'string') fn.description = tool.description;
    fn.parameters = isObj(tool.parameters) ? tool.parameters : { type: 'object', properties: {} };
    return { type: 'function', function: fn };
  });
  const toolChoice = f.given('tool_choice') ? (JSON.parse(f.raw('tool_choice')!) as Json) : 'auto';
  const toolMode = readResponsesToolChoice(toolChoice, chatTools.map((t) => t.function.name as string));
  const parallelToolCalls = f.boolean('parallel_tool_calls') ?? true;
  // PRE.4: required / named ask the engine for guided tool-call JSON (the parsers read it back).
  const toolConstraint = chatTools.length > 0 ? toolChoiceConstraint(chatTools.map((t) => t.function as unknown as ToolFunction), toolMode, parallelToolCalls) : undefined;
  const text = readResponsesText(f.given('text') ? (JSON.parse(f.raw('text')!) as Json) : undefined);
  const reasoning = readResponsesReasoning(f.given('reasoning') ? (JSON.parse(f.raw('reasoning')!) as Json) : undefined);
  // reasoning.effort reaches the template as on chat completions (reasoning_effort).
  const kwargs = reasoning.effort === null ? null : JSON.stringify({ reasoning_effort: reasoning.effort });
  return {
    model,
    prompt: templateBody(messages, chatTools, kwargs, reasoning.effort, null, images),
    template: { tools: chatTools, kwargs },
    store,
    previousResponseId,
    include,
    logprobs: include.includes(OUTPUT_TEXT_LOGPROBS),
    topLogprobs,
    input,
    constraint: oneConstraint(text.constraint, toolConstraint),
    text: text.echo,
    reasoning,
    instructions,
    maxOutputTokens,
    temperature,
    topP,
    stream: f.boolean('stream') ?? false,
    tools,
    toolChoice,
    toolMode,
    parallelToolCalls,
    metadata: f.object('metadata') ? (JSON.parse(f.raw('metadata')!) as Record<string, unknown>) : {},
    nvext: readNvext(f, header, undefined, undefined, ignoreUnsupported),
  };
}

/** tool_choice required / named already constrain the output: text.format may not too. */
function oneConstraint(format: GenerateConstraint | undefined, tool: GenerateConstraint | undefined): GenerateConstraint | undefined {
  if (format && tool) throw bad('`tool_choice` "required" or a named function already constrains the output to tool-call JSON; it cannot be combined with a `text.format` schema', 'tool_choice');
  return tool ?? format;
}

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);

/**
 * A message item's content for the template: its text (parts joined with a newline), or,
 * when it holds input_image parts, its parts in order with each image's URL taken into
 * `images` and an image marker left in its place.
 */
function messageContent(content: Json | undefined, where: string, images: ImageInput[]): string | Obj[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw bad(`\`${where}.content\` must be a string or an array of content parts`, 'input');
  let parts: Obj[] | null = null;
  const texts = content.map((p, j) => {
    if (isObj(p) && p.type === 'input_image') {
      const at = `${where}.content[${j}]`;
      images.push({ url: responsesImageUrl(p, at), where: at });
      parts ??= [];
      return null;
    }
    if (!isObj(p) || (p.type !== 'input_text' && p.type !== 'output_text' && p.type !== 'text') || typeof p.text !== 'string') {
      throw bad(`\`${where}.content[${j}]\`: only input_text, output_text and input_image parts are supported`, 'input');
    }
    return p.text;
  });
  if (parts === null) return texts.join('\n');
  return texts.map((t) => (t === null ? IMAGE_MARKER : { type: 'text', text: t }));
}

/** One input item onto the chat messages; `where` names it in errors (input[i] by default). */
export function appendItem(out: Obj[], item: Json, i: number, images: ImageInput[], where = `input[${i}]`): void {
  if (!isObj(item)) throw bad(`\`${where}\` must be an object`, 'input');
  const type = item.type ?? 'message';
  if (type === 'message') {
    if (typeof item.role !== 'string' || !ROLES.has(item.role)) throw bad(`\`${where}.role\` must be one of user, assistant, system, developer`, 'input');
    const role = item.role === 'developer' ? 'system' : item.role;
    const content = messageContent(item.content, where, images);
    const last = out.at(-1);
    // A reasoning item opens the assistant turn its message completes.
    if (role === 'assistant' && last && last.role === 'assistant' && last.content === '' && last.reasoning_content !== undefined && !last.tool_calls) last.content = content;
    else out.push({ role, content });
    return;
  }
  if (type === 'reasoning') {
    const parts = Array.isArray(item.content) ? item.content : [];
    const text = parts.map((p, j) => {
      if (!isObj(p) || p.type !== 'reasoning_text' || typeof p.text !== 'string') throw bad(`\`${where}.content[${j}]\` must be a reasoning_text part`, 'input');
      return p.text;
    });
    out.push({ role: 'assistant', content: '', reasoning_content: text.join('') });
    return;
  }
  if (type === 'function_call') {
    if (typeof item.name !== 'string' || typeof item.call_id !== 'string' || typeof item.arguments !== 'string') {
      throw bad(`\`${where}\`: a function_call needs call_id, name and arguments (a JSON string)`, 'input');
    }
    const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
    const last = out.at(-1);
    // Calls after an assistant message (or reasoning, or another call) belong to that turn.
    if (last && last.role === 'assistant') {
      if (!Array.isArray(last.tool_calls)) last.tool_calls = [];
      (last.tool_calls as Json[]).push(call);
    } else out.push({ role: 'assistant', content: '', tool_calls: [call] });
    return;
  }
  if (type === 'function_call_output') {
    if (typeof item.call_id !== 'string' || typeof item.output !== 'string') throw bad(`\`${where}\`: a function_call_output needs call_id and output (a string)`, 'input');
    out.push({ role: 'tool', tool_call_id: item.call_id, content: item.output });
    return;
  }
  throw bad(`\`${where}\`: input item type ${JSON.stringify(type)} is not supported`, 'input');
}
