// Anthropic `tool_choice`: {type: "auto" | "any" | "tool" (with name) | "none"}, plus
// `disable_parallel_tool_use`. Mapped onto the chat pipeline's ToolChoice: auto → auto,
// none → none (tools still rendered, no tool parsing), any → required, tool → named.
// required and named need guided decoding of the call, which the chat path does not
// offer yet: they are refused with the same unsupported_parameter error.

import { ApiError } from './errors.js';
import { isObject as isObj, type Json } from './json.js';
import type { ToolChoice } from './tools.js';

function bad(message: string): ApiError {
  return ApiError.badRequest(message, 'tool_choice');
}

/** `raw`: the parsed tool_choice value (undefined when absent); `names`: the request's tool names. */
export function readAnthropicToolChoice(raw: Json | undefined, names: string[]): ToolChoice {
  if (raw === undefined || raw === null) return names.length > 0 ? { kind: 'auto' } : { kind: 'none' };
  if (!isObj(raw)) throw bad('tool_choice: must be an object with a `type` of "auto", "any", "tool" or "none"');
  if (raw.disable_parallel_tool_use !== undefined && typeof raw.disable_parallel_tool_use !== 'boolean') {
    throw bad('tool_choice.disable_parallel_tool_use: must be a boolean');
  }
  switch (raw.type) {
    case 'auto':
      return names.length > 0 ? { kind: 'auto' } : { kind: 'none' };
    case 'none':
      return { kind: 'none' };
    case 'any':
      if (names.length === 0) throw bad('tool_choice: "any" needs at least one tool in `tools`');
      throw new ApiError(400, 'tool_choice: "any" is not supported yet (it needs guided decoding of tool calls)', { param: 'tool_choice', code: 'unsupported_parameter' });
    case 'tool': {
      if (typeof raw.name !== 'string' || raw.name === '') throw bad('tool_choice.name: Field required for type "tool"');
      if (!names.includes(raw.name)) throw bad(`tool_choice.name: \`${raw.name}\` is not in \`tools\``);
      throw new ApiError(400, 'tool_choice: "tool" is not supported yet (it needs guided decoding of tool calls)', { param: 'tool_choice', code: 'unsupported_parameter' });
    }
    default:
      throw bad(`tool_choice.type: must be "auto", "any", "tool" or "none", got ${JSON.stringify(raw.type)}`);
  }
}
