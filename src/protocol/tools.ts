// `tools`, `tool_choice` and `parallel_tool_calls` of a chat request: shape and limits
// checked before any work (count, names, a named choice that exists), the tools array
// itself left as a byte span for the native template.

import { ApiError } from './errors.js';
import type { Fields, Span } from './fields.js';
import { JsonType } from './fields.js';

export const MAX_TOOLS = 1536;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,96}$/;

export type ToolChoice = { kind: 'none' } | { kind: 'auto' } | { kind: 'required' } | { kind: 'named'; name: string };

/** A tool's function as the readers parsed it (name, and its parameters schema if any). */
export interface ToolFunction {
  name: string;
  parameters?: unknown;
}

export interface ToolSettings {
  /** The tools array span, or null when absent or empty. */
  tools: Span | null;
  toolNames: string[];
  /** The tools' functions, parsed once here (tool_choice required / named build their schema from them). */
  functions: ToolFunction[];
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
}

type Reader = Pick<Fields<'tools' | 'tool_choice' | 'parallel_tool_calls'>, 'array' | 'raw' | 'type' | 'string' | 'boolean'>;

function bad(message: string, param: string): ApiError {
  return ApiError.badRequest(message, param);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function readTools(f: Reader): ToolSettings {
  const span = f.array('tools');
  const names: string[] = [];
  const functions: ToolFunction[] = [];
  if (span) {
    if (span.length > MAX_TOOLS) throw bad(`\`tools\` may hold at most ${MAX_TOOLS} tools, got ${span.length}`, 'tools');
    const list = JSON.parse(f.raw('tools')!) as unknown[];
    list.forEach((t, i) => {
      if (!isObj(t)) throw bad(`\`tools[${i}]\` must be an object`, 'tools');
      if (t.type !== 'function') throw bad(`\`tools[${i}].type\` must be "function"`, 'tools');
      const fn = t.function;
      if (!isObj(fn)) throw bad(`\`tools[${i}].function\` is required`, 'tools');
      if (typeof fn.name !== 'string' || !TOOL_NAME.test(fn.name)) {
        throw bad(`\`tools[${i}].function.name\` must be 1 to 96 characters of letters, digits, underscores and dashes`, 'tools');
      }
      if (fn.parameters !== undefined && fn.parameters !== null && !isObj(fn.parameters)) throw bad(`\`tools[${i}].function.parameters\` must be an object (a JSON schema)`, 'tools');
      if (fn.description !== undefined && fn.description !== null && typeof fn.description !== 'string') throw bad(`\`tools[${i}].function.description\` must be a string`, 'tools');
      names.push(fn.name);
      functions.push(fn as unknown as ToolFunction);
    });
  }
  const toolChoice = readToolChoice(f, names, span !== undefined);
  return {
    tools: span && span.length > 0 ? { start: span.start, end: span.end } : null,
    toolNames: names,
    functions,
    toolChoice,
    parallelToolCalls: f.boolean('parallel_tool_calls') ?? true,
  };
}

function readToolChoice(f: Reader, names: string[], hasTools: boolean): ToolChoice {
  const t = f.type('tool_choice');
  if (t === undefined || t === JsonType.Null) return hasTools && names.length > 0 ? { kind: 'auto' } : { kind: 'none' };
  if (t === JsonType.String) {
    const v = f.string('tool_choice')!;
    if (v === 'none' || v === 'auto') return { kind: v };
    if (v === 'required') {
      if (names.length === 0) throw bad('`tool_choice` "required" needs at least one tool in `tools`', 'tool_choice');
      return { kind: 'required' };
    }
    throw bad(`\`tool_choice\` must be "none", "auto", "required" or a named function, got ${JSON.stringify(v)}`, 'tool_choice');
  }
  if (t !== JsonType.Object) throw bad('`tool_choice` must be a string or an object', 'tool_choice');
  const v = JSON.parse(f.raw('tool_choice')!) as Record<string, unknown>;
  const fn = v.function;
  if (v.type !== 'function' || !isObj(fn) || typeof fn.name !== 'string') {
    throw bad('`tool_choice` as an object must be {"type": "function", "function": {"name": ...}}', 'tool_choice');
  }
  if (!names.includes(fn.name)) throw bad(`\`tool_choice\` names the function \`${fn.name}\`, which is not in \`tools\``, 'tool_choice');
  return { kind: 'named', name: fn.name };
}
