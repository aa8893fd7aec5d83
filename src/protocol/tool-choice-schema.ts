// tool_choice "required" / named as a guided-decoding constraint (spec 003 PRE.4), built as
// vLLM, SGLang and Dynamo build it: the engine is asked for JSON that matches
//   required: [{"name": <one of the tool names>, "parameters": <that tool's schema>}, ...]
//             (at least one item; at most one when parallel_tool_calls is false)
//   named:    the named tool's parameters object itself.
// The output parsers read that bare JSON back into tool calls (native ToolChoice
// Required / Named). `$defs` of the tools' schemas move to the root, where their
// `#/$defs/...` references resolve once the schemas are nested.

import type { GenerateConstraint } from '../engine/types.js';
import { ApiError } from './errors.js';
import type { ToolChoice, ToolFunction } from './tools.js';

type Schema = Record<string, unknown>;

const EMPTY_PARAMETERS: Schema = { type: 'object', properties: {} };

const isObj = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The constraint for `choice`, or undefined when tool_choice does not constrain the output.
 * `tools`: the functions the reader already parsed (or, for callers holding only the
 * chat-shaped tools JSON, that text).
 */
export function toolChoiceConstraint(tools: readonly ToolFunction[] | string, choice: ToolChoice, parallelToolCalls: boolean): GenerateConstraint | undefined {
  if (choice.kind !== 'required' && choice.kind !== 'named') return undefined;
  // The readers have already checked the shape of every tool.
  const fns = typeof tools === 'string' ? (JSON.parse(tools) as Array<{ function: ToolFunction }>).map((t) => t.function) : tools;
  const defs: Schema = {};
  const params = (name: string, p: unknown): Schema => {
    if (!isObj(p)) return EMPTY_PARAMETERS;
    if (!isObj(p.$defs)) return p;
    const { $defs, ...rest } = p;
    for (const [k, v] of Object.entries($defs as Schema)) {
      if (k in defs && JSON.stringify(defs[k]) !== JSON.stringify(v)) {
        throw ApiError.badRequest(
          `\`tool_choice\` "required" needs one JSON schema for all tools, but \`$defs.${k}\` of \`${name}\` differs from another tool's`,
          'tools',
        );
      }
      defs[k] = v;
    }
    return rest;
  };
  let schema: Schema;
  if (choice.kind === 'named') {
    const fn = fns.find((t) => t.name === choice.name)!;
    schema = params(fn.name, fn.parameters);
  } else {
    schema = {
      type: 'array',
      minItems: 1,
      ...(parallelToolCalls ? {} : { maxItems: 1 }),
      items: {
        type: 'object',
        anyOf: fns.map((t) => ({
          properties: { name: { type: 'string', enum: [t.name] }, parameters: params(t.name, t.parameters) },
          required: ['name', 'parameters'],
        })),
      },
    };
  }
  if (Object.keys(defs).length > 0) schema = { ...schema, $defs: { ...(isObj(schema.$defs) ? schema.$defs : {}), ...defs } };
  return { kind: 'json_schema', value: JSON.stringify(schema) };
}
