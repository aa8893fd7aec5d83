// Anthropic `tool_choice`: {type: "auto" | "any" | "tool" (with name) | "none"}, plus
// `disable_parallel_tool_use`. Mapped onto the chat pipeline's ToolChoice: auto → auto,
// none → none (tools still rendered, no tool parsing), any → required, tool → named;
// required and named ask the engine for guided tool-call JSON (tool-choice-schema.ts),
// at most one call when parallel tool use is disabled.

import { ApiError } from './errors.js';
import { isObject as isObj, type Json } from './json.js';
import type { ToolChoice } from './tools.js';

function bad(message: string): ApiError {
  return ApiError.badRequest(message, 'tool_choice');
}

export interface AnthropicToolChoice {
  choice: ToolChoice;
  /** false when `disable_parallel_tool_use` is true. */
  parallel: boolean;
}

/** `raw`: the parsed tool_choice value (undefined when absent); `names`: the request's tool names. */
export function readAnthropicToolChoice(raw: Json | undefined, names: string[]): AnthropicToolChoice {
  const auto: ToolChoice = names.length > 0 ? { kind: 'auto' } : { kind: 'none' };
  if (raw === undefined || raw === null) return { choice: auto, parallel: true };
  if (!isObj(raw)) throw bad('tool_choice: must be an object with a `type` of "auto", "any", "tool" or "none"');
  if (raw.disable_parallel_tool_use !== undefined && typeof raw.disable_parallel_tool_use !== 'boolean') {
    throw bad('tool_choice.disable_parallel_tool_use: must be a boolean');
  }
  const parallel = raw.disable_parallel_tool_use !== true;
  switch (raw.type) {
    case 'auto':
      return { choice: auto, parallel };
    case 'none':
      return { choice: { kind: 'none' }, parallel };
    case 'any':
      if (names.length === 0) throw bad('tool_choice: "any" needs at least one tool in `tools`');
      return { choice: { kind: 'required' }, parallel };
    case 'tool':
      if (typeof raw.name !== 'string' || raw.name === '') throw bad('tool_choice.name: Field required for type "tool"');
      if (!names.includes(raw.name)) throw bad(`tool_choice.name: \`${raw.name}\` is not in \`tools\``);
      return { choice: { kind: 'named', name: raw.name }, parallel };
    default:
      throw bad(`tool_choice.type: must be "auto", "any", "tool" or "none", got ${JSON.stringify(raw.type)}`);
  }
}
