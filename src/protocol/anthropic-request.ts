// The Anthropic Messages request (POST /v1/messages and /v1/messages/count_tokens),
// read and validated, then reshaped into the chat-template message form (system
// message first, tool_use blocks as assistant tool_calls, tool_result blocks as tool
// messages, thinking blocks as reasoning_content). The reshaped messages are written
// to a new JSON buffer so the native template reads them as it reads any chat body.

import { anthropicImageUrl, IMAGE_MARKER, type ImageInput } from './image-input.js';
import { ApiError } from './errors.js';
import { isObject as isObj, type Json, type JsonObject as Obj } from './json.js';
import { admit } from './admission.js';
import { Fields, FieldTable, JsonType } from './fields.js';
import { templateBody, type TemplateBody } from './template-body.js';
import { readNvext, type NvExt } from './nvext.js';
import type { ToolChoice } from './tools.js';
import { readAnthropicToolChoice } from './anthropic-tool-choice.js';
import { templateKwargsWithThinking } from './thinking.js';
import { toolChoiceConstraint } from './tool-choice-schema.js';
import type { ToolFunction } from './tools.js';
import { integerIn, I32_MAX, U32_MAX } from './sampling.js';
import type { GenerateConstraint } from '../engine/types.js';

const MESSAGES_FIELDS = ['model', 'messages', 'system', 'max_tokens', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice', 'thinking', 'metadata', 'nvext'] as const;
const COUNT_FIELDS = ['model', 'messages', 'system', 'tools', 'thinking'] as const;

let messagesTable: FieldTable<(typeof MESSAGES_FIELDS)[number]> | null = null;
let countTable: FieldTable<(typeof COUNT_FIELDS)[number]> | null = null;

export type AnthropicPrompt = TemplateBody;

export interface AnthropicRequest {
  model: string;
  prompt: AnthropicPrompt;
  maxTokens: number;
  stream: boolean;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences: string[];
  /** tool_choice mapped onto the chat pipeline's choices (any → required, tool → named). */
  toolChoice: ToolChoice;
  /** false with `disable_parallel_tool_use: true`: at most one tool_use block. */
  parallelToolCalls: boolean;
  /** any / tool: the guided tool-call JSON the engine is asked for (PRE.4). */
  constraint?: GenerateConstraint;
  /** Routing extensions (nvext and the routing headers), as on the OpenAI endpoints. */
  nvext: NvExt;
}

function bad(message: string, param: string | null = null): ApiError {
  return ApiError.badRequest(message, param);
}

function modelOf(f: Pick<Fields<'model'>, 'string'>): string {
  const model = f.string('model');
  if (model === undefined) throw bad('model: Field required', 'model');
  if (model.trim() === '') throw bad('model: must not be blank', 'model');
  return model;
}

export function readAnthropicRequest(body: Buffer, ignoreUnsupported: boolean, header: (name: string) => string = () => ''): AnthropicRequest {
  messagesTable ??= new FieldTable(MESSAGES_FIELDS);
  const f = Fields.scan(body, messagesTable);
  admit(f.unknown, '', ignoreUnsupported);
  const model = modelOf(f);
  const maxTokens = f.integer('max_tokens');
  if (maxTokens === undefined) throw bad('max_tokens: Field required', 'max_tokens');
  if (maxTokens < 1) throw bad(`max_tokens: must be at least 1, got ${maxTokens}`, 'max_tokens');
  integerIn('max_tokens', maxTokens, 1, U32_MAX, 'a 32-bit unsigned integer');
  const temperature = f.number('temperature');
  if (temperature !== undefined && (temperature < 0 || temperature > 1)) throw bad(`temperature: must be between 0 and 1, got ${temperature}`, 'temperature');
  const topP = f.number('top_p');
  if (topP !== undefined && (topP < 0 || topP > 1)) throw bad(`top_p: must be between 0 and 1, got ${topP}`, 'top_p');
  const topK = f.integer('top_k');
  if (topK !== undefined && topK < 1) throw bad(`top_k: must be at least 1, got ${topK}`, 'top_k');
  integerIn('top_k', topK, 1, I32_MAX, 'a 32-bit integer');
  if (f.given('metadata')) f.object('metadata');
  let stopSequences: string[] = [];
  if (f.array('stop_sequences')) {
    const list = JSON.parse(f.raw('stop_sequences')!) as unknown[];
    if (!list.every((x) => typeof x === 'string' && x !== '')) throw bad('stop_sequences: must be an array of non-empty strings', 'stop_sequences');
    stopSequences = list as string[];
  }
  const { prompt, functions } = reshape(f, body);
  const { choice: toolChoice, parallel } = readAnthropicToolChoice(f.given('tool_choice') ? (JSON.parse(f.raw('tool_choice')!) as Json) : undefined, functions.map((t) => t.name));
  const constraint = prompt.tools ? toolChoiceConstraint(functions, toolChoice, parallel) : undefined;
  return {
    model,
    prompt,
    maxTokens,
    stream: f.boolean('stream') ?? false,
    temperature,
    topP,
    topK,
    stopSequences,
    toolChoice,
    parallelToolCalls: parallel,
    constraint,
    nvext: readNvext(f, header, undefined, undefined, ignoreUnsupported),
  };
}

export function readCountTokensRequest(body: Buffer, ignoreUnsupported: boolean): { model: string; prompt: AnthropicPrompt } {
  countTable ??= new FieldTable(COUNT_FIELDS);
  const f = Fields.scan(body, countTable);
  admit(f.unknown, '', ignoreUnsupported);
  return { model: modelOf(f), prompt: reshape(f, body).prompt };
}

type ShapeReader = Pick<Fields<'messages' | 'system' | 'tools' | 'thinking'>, 'array' | 'type' | 'raw' | 'string'>;

/** `thinking` ({type: enabled|disabled, budget_tokens}) as template kwargs, normalised as on chat (thinking.ts). */
function thinkingKwargs(f: ShapeReader): string | null {
  return templateKwargsWithThinking({ type: () => f.type('thinking'), raw: () => f.raw('thinking'), string: () => undefined }, null).text;
}

/** The chat-template body of the request, and its tools' functions (parsed once, here). */
function reshape(f: ShapeReader, body: Buffer): { prompt: AnthropicPrompt; functions: ToolFunction[] } {
  const span = f.array('messages');
  if (!span) throw bad('messages: Field required', 'messages');
  if (span.length === 0) throw bad('messages: must contain at least one message', 'messages');
  const out: Obj[] = [];
  const system = systemText(f);
  if (system !== null) out.push({ role: 'system', content: system });
  const messages = JSON.parse(body.toString('utf8', span.start, span.end)) as Json[];
  const images: ImageInput[] = [];
  messages.forEach((m, i) => out.push(...reshapeMessage(m, i, images)));
  if (out.length === (system === null ? 0 : 1)) throw bad('messages: every message is empty (no content blocks)', 'messages');
  const tools = f.array('tools') ? reshapeTools(JSON.parse(f.raw('tools')!) as Json[]) : null;
  const prompt = templateBody(out, tools, thinkingKwargs(f), null, prefillOf(out), images);
  // (templateBody leaves an empty tools array out of the template, as no tools.)
  return { prompt, functions: prompt.tools && tools ? tools.map((t) => t.function as unknown as ToolFunction) : [] };
}

/**
 * A trailing assistant message is a prefill (Anthropic's documented behaviour): the model
 * continues it, so the prompt ends with its text (continue_final_message on chat) and the
 * answer holds only what follows. Like Anthropic, its text may not end in whitespace.
 */
function prefillOf(out: Obj[]): string | null {
  // (A message whose content is an empty block list reshapes to nothing: `out` may be empty.)
  const last = out.at(-1);
  if (last === undefined || last.role !== 'assistant' || last.tool_calls !== undefined) return null;
  const text = last.content;
  if (typeof text !== 'string' || text.trim() === '') return null;
  if (/\s$/.test(text)) throw bad('messages: final assistant content cannot end with trailing whitespace', 'messages');
  return text;
}

function systemText(f: ShapeReader): string | null {
  const t = f.type('system');
  if (t === undefined || t === JsonType.Null) return null;
  if (t === JsonType.String) return f.string('system')!;
  if (t !== JsonType.Array) throw bad('system: must be a string or an array of text blocks', 'system');
  const blocks = JSON.parse(f.raw('system')!) as Json[];
  return blocks
    .map((b, i) => {
      if (!isObj(b) || b.type !== 'text' || typeof b.text !== 'string') throw bad(`system.${i}: must be a text block`, 'system');
      return b.text;
    })
    .join('\n');
}

function textOf(content: Json | undefined, where: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw bad(`${where}: must be a string or an array of content blocks`, 'messages');
  return content
    .map((b, i) => {
      if (!isObj(b) || b.type !== 'text' || typeof b.text !== 'string') throw bad(`${where}.${i}: only text blocks are supported here`, 'messages');
      return b.text;
    })
    .join('\n');
}

function reshapeMessage(m: Json, i: number, images: ImageInput[]): Obj[] {
  const where = `messages.${i}`;
  if (!isObj(m)) throw bad(`${where}: must be an object`, 'messages');
  const role = m.role;
  if (role !== 'user' && role !== 'assistant') throw bad(`${where}.role: must be "user" or "assistant"`, 'messages');
  const content = m.content;
  if (typeof content === 'string') return [{ role, content }];
  if (!Array.isArray(content)) throw bad(`${where}.content: Field required (a string or an array of content blocks)`, 'messages');

  if (role === 'user') {
    const out: Obj[] = [];
    // Text blocks, and an image marker where an image block was (its URL into `images`).
    const texts: (string | null)[] = [];
    content.forEach((b, j) => {
      const at = `${where}.content.${j}`;
      if (!isObj(b)) throw bad(`${at}: must be a content block object`, 'messages');
      if (b.type === 'text' && typeof b.text === 'string') texts.push(b.text);
      else if (b.type === 'image') {
        images.push({ url: anthropicImageUrl(b, at), where: at });
        texts.push(null);
      } else if (b.type === 'tool_result') {
        if (typeof b.tool_use_id !== 'string') throw bad(`${at}.tool_use_id: Field required`, 'messages');
        out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.content === undefined ? '' : textOf(b.content, `${at}.content`) });
      } else throw bad(`${at}: content block type ${JSON.stringify(b.type)} is not supported`, 'messages');
    });
    if (texts.includes(null)) out.push({ role: 'user', content: texts.map((t) => (t === null ? IMAGE_MARKER : { type: 'text', text: t })) });
    else if (texts.length > 0) out.push({ role: 'user', content: texts.join('\n') });
    return out;
  }

  const texts: string[] = [];
  const thinking: string[] = [];
  const calls: Obj[] = [];
  content.forEach((b, j) => {
    const at = `${where}.content.${j}`;
    if (!isObj(b)) throw bad(`${at}: must be a content block object`, 'messages');
    if (b.type === 'text' && typeof b.text === 'string') texts.push(b.text);
    else if (b.type === 'thinking' && typeof b.thinking === 'string') thinking.push(b.thinking);
    else if (b.type === 'redacted_thinking') return;
    else if (b.type === 'tool_use') {
      if (typeof b.id !== 'string' || typeof b.name !== 'string') throw bad(`${at}: tool_use needs an id and a name`, 'messages');
      if (!isObj(b.input)) throw bad(`${at}.input: must be an object`, 'messages');
      calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input) } });
    } else throw bad(`${at}: content block type ${JSON.stringify(b.type)} is not supported`, 'messages');
  });
  const msg: Obj = { role: 'assistant', content: texts.join('') };
  if (thinking.length > 0) msg.reasoning_content = thinking.join('');
  if (calls.length > 0) msg.tool_calls = calls;
  return [msg];
}

function reshapeTools(tools: Json[]): Obj[] {
  return tools.map((t, i) => {
    if (!isObj(t) || typeof t.name !== 'string' || t.name === '') throw bad(`tools.${i}.name: Field required`, 'tools');
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') throw bad(`tools.${i}.type: only custom (client) tools are supported, got ${JSON.stringify(t.type)}`, 'tools');
    if (!isObj(t.input_schema)) throw bad(`tools.${i}.input_schema: Field required`, 'tools');
    // OpenAI's key order (name, description, parameters): the template renders tools as JSON.
    const fn: Obj = { name: t.name };
    if (typeof t.description === 'string') fn.description = t.description;
    fn.parameters = t.input_schema;
    return { type: 'function', function: fn };
  });
}
