// Responses `tool_choice`: "none" | "auto" | "required" | {type: "function", name}.
// Mapped onto the chat pipeline's ToolChoice; required and named ask the engine for
// guided tool-call JSON (tool-choice-schema.ts), as on chat completions.

import { ApiError } from './errors.js';
import { isObject as isObj, type Json } from './json.js';
import type { ToolChoice } from './tools.js';

function bad(message: string): ApiError {
  return ApiError.badRequest(message, 'tool_choice');
}

/** `raw`: the parsed tool_choice (undefined when absent); `names`: the request's function tool names. */
export function readResponsesToolChoice(raw: Json | undefined, names: string[]): ToolChoice {
  if (raw === undefined || raw === null || raw === 'auto') return names.length > 0 ? { kind: 'auto' } : { kind: 'none' };
  if (raw === 'none') return { kind: 'none' };
  if (raw === 'required') {
    if (names.length === 0) throw bad('`tool_choice` "required" needs at least one tool in `tools`');
    return { kind: 'required' };
  }
  if (isObj(raw) && raw.type === 'function') {
    if (typeof raw.name !== 'string' || raw.name === '') throw bad('`tool_choice.name` is required for type "function"');
    if (!names.includes(raw.name)) throw bad(`\`tool_choice\` names the function \`${raw.name}\`, which is not in \`tools\``);
    return { kind: 'named', name: raw.name };
  }
  throw bad('`tool_choice` must be "none", "auto", "required" or {"type": "function", "name": ...}');
}
