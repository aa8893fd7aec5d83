// OpenAI chat completion response bodies. Streaming chunks are built from a
// per-request prefix string so that each token costs one JSON string escape and a
// concatenation, not an object tree and a full JSON.stringify.

import { jsonString } from './json-text.js';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Always present, 0 when nothing was cached (vLLM and SGLang always send it). */
  prompt_tokens_details: { cached_tokens: number };
}

/** JSON.stringify(usage), written directly (the members are counts: integers). */
export function usageJson(u: Usage): string {
  return `{"prompt_tokens":${u.prompt_tokens},"completion_tokens":${u.completion_tokens},"total_tokens":${u.total_tokens},"prompt_tokens_details":{"cached_tokens":${u.prompt_tokens_details.cached_tokens}}}`;
}

export function usageOf(promptTokens: number, completionTokens: number, cachedTokens: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens, prompt_tokens_details: { cached_tokens: cachedTokens } };
}

/** What follows a plain content delta's JSON string (no logprobs, no usage). */
const CONTENT_TAIL = '},"logprobs":null,"finish_reason":null}]}\n\n';

export class ChatChunkWriter {
  private readonly head: string;

  constructor(id: string, model: string, created: number) {
    this.head = `data: {"id":${jsonString(id)},"object":"chat.completion.chunk","created":${created},"model":${jsonString(model)},"choices":[`;
  }

  /** The first chunk of a choice: the assistant role with empty content. */
  role(index: number): string {
    return `${this.head}{"index":${index},"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n`;
  }

  /** Per choice index: the text of a content chunk before its JSON string (see content). */
  private readonly contentHeads: string[] = [];

  /** `logprobs`: JSON text of the delta's logprobs object (see logprobs-response.ts). */
  content(index: number, text: string, usage: Usage | null = null, logprobs = 'null'): string {
    // The per-token case, in three pieces: a chunk's text is a rope of its pieces until the
    // socket write flattens it, and the template below makes about ten.
    if (usage === null && logprobs === 'null') return (this.contentHeads[index] ??= `${this.head}{"index":${index},"delta":{"content":`) + jsonString(text) + CONTENT_TAIL;
    const u = usage ? `,"usage":${usageJson(usage)}` : '';
    return `${this.head}{"index":${index},"delta":{"content":${jsonString(text)}},"logprobs":${logprobs},"finish_reason":null}]${u}}\n\n`;
  }

  reasoning(index: number, text: string, logprobs = 'null'): string {
    return `${this.head}{"index":${index},"delta":{"reasoning_content":${jsonString(text)}},"logprobs":${logprobs},"finish_reason":null}]}\n\n`;
  }

  /** A tool call begins: its id, type and name, with empty arguments. */
  toolStart(index: number, call: number, id: string, name: string): string {
    const tc = `{"index":${call},"id":${jsonString(id)},"type":"function","function":{"name":${jsonString(name)},"arguments":""}}`;
    return `${this.head}{"index":${index},"delta":{"tool_calls":[${tc}]},"logprobs":null,"finish_reason":null}]}\n\n`;
  }

  /** A fragment of a tool call's arguments (concatenate per call index). */
  toolArgs(index: number, call: number, text: string): string {
    const tc = `{"index":${call},"function":{"arguments":${jsonString(text)}}}`;
    return `${this.head}{"index":${index},"delta":{"tool_calls":[${tc}]},"logprobs":null,"finish_reason":null}]}\n\n`;
  }

  finish(index: number, reason: string, usage: Usage | null, logprobs = 'null'): string {
    const u = usage ? `,"usage":${usageJson(usage)}` : '';
    return `${this.head}{"index":${index},"delta":{},"logprobs":${logprobs},"finish_reason":${jsonString(reason)}}]${u}}\n\n`;
  }

  /** A chunk with no choices carrying the response `nvext` (asked for with nvext.extra_fields). */
  nvext(nvext: Record<string, unknown>): string {
    return `${this.head}],"nvext":${JSON.stringify(nvext)}}\n\n`;
  }

  /** The closing usage-only chunk of stream_options.include_usage. */
  usage(usage: Usage): string {
    return `${this.head}],"usage":${usageJson(usage)}}\n\n`;
  }
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatChoice {
  index: number;
  content: string;
  reasoning: string;
  toolCalls: ToolCall[];
  finishReason: string;
  /** logprobs.content entries when logprobs were asked for. */
  logprobs?: unknown[];
}

/**
 * The chat.completion body, written as text: the same bytes as JSON.stringify of its object
 * form (test/chat-response.test.ts holds them equal), without building that tree per request.
 */
export function chatCompletion(id: string, model: string, created: number, choices: ChatChoice[], usage: Usage, nvext: Record<string, unknown> | null = null): string {
  let out = `{"id":${jsonString(id)},"object":"chat.completion","created":${created},"model":${jsonString(model)},"choices":[`;
  for (let i = 0; i < choices.length; i++) {
    const c = choices[i];
    if (i > 0) out += ',';
    // OpenAI: content is null when the turn is only tool calls.
    const content = c.content === '' && c.toolCalls.length > 0 ? 'null' : jsonString(c.content);
    out += `{"index":${c.index},"message":{"role":"assistant","content":${content}`;
    if (c.reasoning) out += `,"reasoning_content":${jsonString(c.reasoning)}`;
    if (c.toolCalls.length > 0) {
      out += `,"tool_calls":${JSON.stringify(c.toolCalls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } })))}`;
    }
    out += `},"logprobs":${c.logprobs ? JSON.stringify({ content: c.logprobs }) : 'null'},"finish_reason":${jsonString(c.finishReason)}}`;
  }
  out += `],"usage":${usageJson(usage)}`;
  if (nvext) out += `,"nvext":${JSON.stringify(nvext)}`;
  return out + '}';
}
