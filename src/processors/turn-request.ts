// The chat completion request a processor receives for /v1/responses and /v1/messages:
// made from the chat turn Portico already read out of the request (messages in the chat
// template's shape, tools, output limit, sampling, stop, tool_choice, template kwargs).

import type { ChatTurn } from '../api/chat-turn.js';
import type { ToolChoice } from '../protocol/tools.js';
import type { ChatCompletionRequest } from './contract.js';

function toolChoiceOf(t: ToolChoice): unknown {
  if (t.kind === 'named') return { type: 'function', function: { name: t.name } };
  return t.kind;
}

export function chatRequestOfTurn(model: string, turn: ChatTurn, stream: boolean): ChatCompletionRequest {
  const p = turn.prompt;
  const req: ChatCompletionRequest = {
    model,
    messages: JSON.parse(p.body.toString('utf8', p.messages.start, p.messages.end)) as Array<Record<string, unknown>>,
    stream,
  };
  if (p.tools) {
    req.tools = JSON.parse(p.body.toString('utf8', p.tools.start, p.tools.end)) as unknown[];
    req.tool_choice = toolChoiceOf(turn.toolChoice);
  }
  if (turn.maxTokens !== undefined) req.max_tokens = turn.maxTokens;
  const s = turn.sampling;
  if (s.temperature !== undefined) req.temperature = s.temperature;
  if (s.topP !== undefined) req.top_p = s.topP;
  if (s.topK !== undefined) req.top_k = s.topK;
  if (turn.stop && turn.stop.length > 0) req.stop = turn.stop;
  if (p.templateKwargs) req.chat_template_kwargs = JSON.parse(p.templateKwargs) as Record<string, unknown>;
  if (stream) req.stream_options = { include_usage: true };
  return req;
}
