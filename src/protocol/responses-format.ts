// Structured output and reasoning effort on the Responses API: `text.format` (text,
// json_object, json_schema with name/schema/strict at the format level) becomes the
// engine-neutral constraint, as response_format does on chat; `reasoning.effort` becomes
// the template kwarg `reasoning_effort`, as on chat (thinking.ts). Both are echoed back
// in the response object.

import type { GenerateConstraint } from '../engine/types.js';
import { ApiError } from './errors.js';
import { isObject, type Json } from './json.js';
import { REASONING_EFFORTS } from './thinking.js';

export interface ResponsesText {
  constraint?: GenerateConstraint;
  /** `text` as the response object echoes it. */
  echo: { format: Record<string, unknown> };
}

const bad = (message: string, param: string) => ApiError.badRequest(message, param);

export function readResponsesText(raw: Json | undefined): ResponsesText {
  if (raw === undefined || raw === null) return { echo: { format: { type: 'text' } } };
  if (!isObject(raw)) throw bad('`text` must be an object', 'text');
  for (const k of Object.keys(raw)) {
    if (k !== 'format' && k !== 'verbosity') throw ApiError.badRequest(`Unsupported parameter(s): \`text.${k}\``, `text.${k}`, 'unsupported_parameter');
  }
  const fmt = raw.format;
  if (fmt === undefined || fmt === null) return { echo: { format: { type: 'text' } } };
  if (!isObject(fmt)) throw bad('`text.format` must be an object', 'text.format');
  if (fmt.type === 'text') return { echo: { format: { type: 'text' } } };
  if (fmt.type === 'json_object') return { constraint: { kind: 'json_object', value: '' }, echo: { format: { type: 'json_object' } } };
  if (fmt.type === 'json_schema') {
    if (typeof fmt.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(fmt.name)) {
      throw bad('`text.format.name` must be 1 to 64 characters of a-z, A-Z, 0-9, underscores and dashes', 'text.format.name');
    }
    if (!isObject(fmt.schema)) throw bad('`text.format.schema` must be a JSON schema object', 'text.format.schema');
    if (fmt.strict !== undefined && fmt.strict !== null && typeof fmt.strict !== 'boolean') throw bad('`text.format.strict` must be a boolean', 'text.format.strict');
    if (fmt.description !== undefined && fmt.description !== null && typeof fmt.description !== 'string') throw bad('`text.format.description` must be a string', 'text.format.description');
    return { constraint: { kind: 'json_schema', value: JSON.stringify(fmt.schema) }, echo: { format: fmt } };
  }
  throw bad(`\`text.format.type\` must be one of "text", "json_object", "json_schema", got ${JSON.stringify(fmt.type ?? null)}`, 'text.format.type');
}

/** `reasoning: {effort, summary}`: the effort, validated as on chat. */
export function readResponsesReasoning(raw: Json | undefined): { effort: string | null; summary: string | null } {
  if (raw === undefined || raw === null) return { effort: null, summary: null };
  if (!isObject(raw)) throw bad('`reasoning` must be an object', 'reasoning');
  for (const k of Object.keys(raw)) {
    if (k !== 'effort' && k !== 'summary' && k !== 'generate_summary') throw ApiError.badRequest(`Unsupported parameter(s): \`reasoning.${k}\``, `reasoning.${k}`, 'unsupported_parameter');
  }
  const effort = raw.effort ?? null;
  if (effort !== null && (typeof effort !== 'string' || !(REASONING_EFFORTS as readonly string[]).includes(effort))) {
    throw bad(`\`reasoning.effort\` must be one of ${REASONING_EFFORTS.map((x) => `"${x}"`).join(', ')}, got ${JSON.stringify(effort)}`, 'reasoning.effort');
  }
  const summary = raw.summary ?? null;
  if (summary !== null && !['auto', 'concise', 'detailed'].includes(summary as string)) {
    throw bad(`\`reasoning.summary\` must be one of "auto", "concise", "detailed", got ${JSON.stringify(summary)}`, 'reasoning.summary');
  }
  return { effort: effort as string | null, summary: summary as string | null };
}
