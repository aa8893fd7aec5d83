// OpenAI Responses API bodies: the response object, and the streaming event sequence
// (response.created, response.in_progress, then each output item's events from
// responses-output.ts, then response.completed or response.incomplete), each numbered
// by sequence_number.

import type { ApiError } from './errors.js';
import { jsonString } from './json-text.js';
import { responsesError } from './error-wire.js';
import type { ResponsesRequest } from './responses-request.js';
import type { EventWriter, OutputItem } from './responses-output.js';

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** `reasoning`: output tokens spent on reasoning (see reasoningTokens in api/responses.ts). */
export function responsesUsage(input: number, output: number, cached: number, reasoning = 0): ResponsesUsage {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: Math.min(reasoning, output) },
    total_tokens: input + output,
  };
}

export interface ResponseState {
  id: string;
  /** The id suffix shared by the response and its output items (resp_<hex>, msg_<hex>, ...). */
  hex: string;
  createdAt: number;
  req: ResponsesRequest;
  /** The response is kept (store: true and the server has a store). */
  store?: boolean;
}

/** The response object; `finish` null while in progress. */
export function responseObject(s: ResponseState, output: OutputItem[], finish: string | null, usage: ResponsesUsage | null) {
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
    output,
    parallel_tool_calls: s.req.parallelToolCalls,
    previous_response_id: s.req.previousResponseId,
    reasoning: s.req.reasoning,
    store: s.store ?? false,
    temperature: s.req.temperature ?? 1,
    text: s.req.text,
    tool_choice: s.req.toolChoice,
    tools: s.req.tools,
    top_logprobs: s.req.topLogprobs,
    top_p: s.req.topP ?? 1,
    truncation: 'disabled',
    usage,
    user: null,
    metadata: s.req.metadata,
  };
}

export class ResponsesStreamWriter implements EventWriter {
  private seq = 0;

  constructor(private readonly s: ResponseState) {}

  /** One event, numbered in order. */
  readonly event = (type: string, data: object): string => {
    // {"type", "sequence_number", ...data} written without an object spread (slow per call).
    const rest = JSON.stringify(data);
    return `event: ${type}\ndata: {"type":"${type}","sequence_number":${this.seq++}${rest.length > 2 ? ',' : ''}${rest.slice(1)}\n\n`;
  };

  /** A per-token delta event (see EventWriter.delta). */
  delta(type: string, itemId: string, outputIndex: number, contentIndex: number | null, delta: string, logprobs: string | null): string {
    const content = contentIndex === null ? '' : `"content_index":${contentIndex},`;
    return `event: ${type}\ndata: {"type":"${type}","sequence_number":${this.seq++},"item_id":"${itemId}","output_index":${outputIndex},${content}"delta":${jsonString(delta)}${logprobs === null ? '' : `,"logprobs":${logprobs}`}}\n\n`;
  }

  start(): string {
    const response = responseObject(this.s, [], null, null);
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  /** After the output items are closed. */
  end(finish: string, usage: ResponsesUsage, output: OutputItem[]): string {
    const incomplete = finish === 'length';
    return this.event(incomplete ? 'response.incomplete' : 'response.completed', { response: responseObject(this.s, output, finish, usage) });
  }

  error(err: ApiError): string {
    return this.event('error', responsesError(err));
  }
}
