// OpenAI Responses API bodies: the response object, and the streaming event sequence
// (response.created, response.in_progress, output_item.added, content_part.added,
// output_text.delta..., output_text.done, content_part.done, output_item.done,
// response.completed or response.incomplete), each numbered by sequence_number.

import type { ApiError } from './errors.js';
import type { ResponsesRequest } from './responses-request.js';

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export function responsesUsage(input: number, output: number, cached: number): ResponsesUsage {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

export interface ResponseState {
  id: string;
  messageId: string;
  createdAt: number;
  req: ResponsesRequest;
}

function textPart(text: string) {
  return { type: 'output_text', text, annotations: [] as unknown[], logprobs: [] as unknown[] };
}

function messageItem(s: ResponseState, text: string | null, status: 'in_progress' | 'completed' | 'incomplete') {
  return { id: s.messageId, type: 'message', status, role: 'assistant', content: text === null ? [] : [textPart(text)] };
}

/** The response object; `text` null while in progress. */
export function responseObject(s: ResponseState, text: string | null, finish: string | null, usage: ResponsesUsage | null) {
  const incomplete = finish === 'length';
  const status = finish === null ? 'in_progress' : incomplete ? 'incomplete' : 'completed';
  return {
    id: s.id,
    object: 'response',
    created_at: s.createdAt,
    status,
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: s.req.instructions,
    max_output_tokens: s.req.maxOutputTokens ?? null,
    model: s.req.model,
    output: text === null ? [] : [messageItem(s, text, incomplete ? 'incomplete' : 'completed')],
    parallel_tool_calls: s.req.parallelToolCalls,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: s.req.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: s.req.toolChoice,
    tools: s.req.tools,
    top_p: s.req.topP ?? 1,
    truncation: 'disabled',
    usage,
    user: null,
    metadata: s.req.metadata,
  };
}

export class ResponsesStreamWriter {
  private seq = 0;
  private text = '';

  constructor(private readonly s: ResponseState) {}

  private event(type: string, data: object): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.seq++, ...data })}\n\n`;
  }

  start(): string {
    const response = responseObject(this.s, null, null, null);
    const ids = { item_id: this.s.messageId, output_index: 0, content_index: 0 };
    return (
      this.event('response.created', { response }) +
      this.event('response.in_progress', { response }) +
      this.event('response.output_item.added', { output_index: 0, item: messageItem(this.s, null, 'in_progress') }) +
      this.event('response.content_part.added', { ...ids, part: textPart('') })
    );
  }

  delta(text: string): string {
    this.text += text;
    return this.event('response.output_text.delta', { item_id: this.s.messageId, output_index: 0, content_index: 0, delta: text, logprobs: [] });
  }

  end(finish: string, usage: ResponsesUsage): string {
    const ids = { item_id: this.s.messageId, output_index: 0, content_index: 0 };
    const incomplete = finish === 'length';
    return (
      this.event('response.output_text.done', { ...ids, text: this.text, logprobs: [] }) +
      this.event('response.content_part.done', { ...ids, part: textPart(this.text) }) +
      this.event('response.output_item.done', { output_index: 0, item: messageItem(this.s, this.text, incomplete ? 'incomplete' : 'completed') }) +
      this.event(incomplete ? 'response.incomplete' : 'response.completed', { response: responseObject(this.s, this.text, finish, usage) })
    );
  }

  error(err: ApiError): string {
    return this.event('error', { code: err.code, message: err.message, param: err.param });
  }
}
