// Anthropic Messages response bodies and the streaming event sequence:
// message_start, then per content block (anthropic-content.ts) content_block_start,
// content_block_delta..., content_block_stop (ping after the first start), then
// message_delta (stop reason, output tokens), message_stop.

import type { ApiError } from './errors.js';
import { errorEvent } from './error-wire.js';
import type { AnthropicBlock } from './anthropic-content.js';

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';

/** Map a finish reason onto Anthropic's stop_reason. */
export function stopReasonOf(finish: string, matchedStop: string | number | null): AnthropicStopReason {
  if (finish === 'length') return 'max_tokens';
  if (finish === 'tool_calls') return 'tool_use';
  if (typeof matchedStop === 'string') return 'stop_sequence';
  return 'end_turn';
}

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
}

/**
 * Anthropic's usage from the prompt's token count and the part of it the engine read from
 * its prefix cache: unlike OpenAI's prompt_tokens, `input_tokens` counts only the tokens
 * not read from cache; those are `cache_read_input_tokens` (omitted when none). The whole
 * prompt is their sum. Portico writes no cache, so cache_creation_input_tokens is omitted.
 */
export function anthropicUsage(prompt: number, output: number, cached: number): AnthropicUsage {
  const read = Math.min(Math.max(cached, 0), prompt);
  const u: AnthropicUsage = { input_tokens: prompt - read, output_tokens: output };
  if (read > 0) u.cache_read_input_tokens = read;
  return u;
}

export function anthropicMessage(id: string, model: string, content: AnthropicBlock[], stop: AnthropicStopReason, stopSequence: string | null, usage: AnthropicUsage): string {
  return JSON.stringify({
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stop,
    stop_sequence: stopSequence,
    usage,
  });
}

function event(name: string, data: object): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class AnthropicStreamWriter {
  constructor(
    private readonly id: string,
    private readonly model: string,
  ) {}

  /** `usage` as known when the first output arrives (its output_tokens 0). */
  start(usage: AnthropicUsage): string {
    const message = { id: this.id, type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage };
    return event('message_start', { type: 'message_start', message });
  }

  /**
   * After the content blocks are closed. message_delta's usage is the whole message's,
   * input counts included (clients overwrite the message_start ones with it).
   */
  end(stop: AnthropicStopReason, stopSequence: string | null, usage: AnthropicUsage): string {
    return (
      event('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: stopSequence }, usage }) +
      event('message_stop', { type: 'message_stop' })
    );
  }

  error(err: ApiError): string {
    return errorEvent(err, 'anthropic');
  }
}
