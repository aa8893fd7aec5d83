// Responses `tool_choice`: "none" | "auto" | "required" | {type: "function", name}.
// Mapped onto the chat pipeline's ToolChoice; required and named need guided decoding
// of the call, which the chat path does not offer yet: they are refused with the same
// unsupported_parameter error as on chat completions.

import { ApiError } from './errors.js';
import { isObject as isObj, type Json } from './json.js';
import type { ToolChoice } from './tools.js';

function bad(message: string): ApiError {
  return ApiError.badRequest(message, 'tool_choice');
}

function unsupported(what: string): ApiError {
  return new ApiError(400, `\`tool_choice\` ${what} is not supported yet (it needs guided decoding of tool calls)`, { param: 'tool_choice', code: 'unsupported_parameter' });
}

/** `raw`: the parsed tool_choice (undefined when absent); `names`: the request's function tool names. */
export function readResponsesToolChoice(raw: Json | undefined, names: string[]): ToolChoice {
  if (raw === undefined || raw === null || raw === 'auto') return names.length > 0 ? { kind: 'auto' } : { kind: 'none' };
  if (raw === 'none') return { kind: 'none' };
  if (raw === 'required') {
    if (names.length === 0) throw bad('`tool_choice` "required" needs at least one tool in `tools`');
    throw unsupported('"required"');
  }
  if (isObj(raw) && raw.type === 'function') {
    if (typeof raw.name !== 'string' || raw.name === '') throw bad('`tool_choice.name` is required for type "function"');
    if (!names.includes(raw.name)) throw bad(`\`tool_choice\` names the function \`${raw.name}\`, which is not in \`tools\``);
    throw unsupported('naming a function');
  }
  throw bad('`tool_choice` must be "none", "auto", "required" or {"type": "function", "name": ...}');
}
