// Structured output: `response_format` (OpenAI), vLLM's `structured_outputs` object and
// its older `guided_json`, `guided_regex`, `guided_grammar`, `guided_choice`, read into the one
// engine-neutral constraint the engine protocols carry (GenerateParams.constraint).
// At most one of them may constrain a request.

import type { GenerateConstraint } from '../engine/types.js';
import { ApiError } from './errors.js';
import { JsonType, type Fields } from './fields.js';

export const CONSTRAINT_FIELDS = ['response_format', 'structured_outputs', 'guided_json', 'guided_regex', 'guided_grammar', 'guided_choice'] as const;
export type ConstraintField = (typeof CONSTRAINT_FIELDS)[number];

type Reader = Pick<Fields<ConstraintField>, 'type' | 'string' | 'raw' | 'given'>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Escape a literal for a regex alternation: only the metacharacters every grammar backend's regex dialect knows. */
export function escapeRegex(s: string): string {
  return s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

function responseFormat(f: Reader): GenerateConstraint | undefined {
  const t = f.type('response_format');
  if (t !== JsonType.Object) throw ApiError.badRequest('`response_format` must be an object', 'response_format');
  const rf = JSON.parse(f.raw('response_format')!) as Record<string, unknown>;
  const type = rf.type;
  if (type === 'text') return undefined;
  if (type === 'json_object') return { kind: 'json_object', value: '' };
  if (type === 'json_schema') {
    const js = rf.json_schema;
    if (!isObject(js)) throw ApiError.badRequest('`response_format.json_schema` is required when `response_format.type` is "json_schema"', 'response_format.json_schema');
    if (typeof js.name !== 'string' || js.name === '') {
      throw ApiError.badRequest('`response_format.json_schema.name` must be a non-empty string', 'response_format.json_schema.name');
    }
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(js.name)) {
      throw ApiError.badRequest('`response_format.json_schema.name` must be 1 to 64 characters of a-z, A-Z, 0-9, underscores and dashes', 'response_format.json_schema.name');
    }
    if (!isObject(js.schema)) throw ApiError.badRequest('`response_format.json_schema.schema` must be a JSON schema object', 'response_format.json_schema.schema');
    if (js.strict !== undefined && js.strict !== null && typeof js.strict !== 'boolean') {
      throw ApiError.badRequest('`response_format.json_schema.strict` must be a boolean', 'response_format.json_schema.strict');
    }
    if (js.description !== undefined && js.description !== null && typeof js.description !== 'string') {
      throw ApiError.badRequest('`response_format.json_schema.description` must be a string', 'response_format.json_schema.description');
    }
    return { kind: 'json_schema', value: JSON.stringify(js.schema) };
  }
  if (type === 'structural_tag') {
    // vLLM hands the whole response_format object to the grammar backend as the tag spec.
    return { kind: 'structural_tag', value: f.raw('response_format')! };
  }
  throw ApiError.badRequest(
    `\`response_format.type\` must be one of "text", "json_object", "json_schema", "structural_tag", got ${JSON.stringify(type ?? null)}`,
    'response_format.type',
  );
}

/** A JSON schema given as an object or as a string holding one. */
function schemaText(v: unknown, name: string): string {
  if (isObject(v)) return JSON.stringify(v);
  if (typeof v === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      throw ApiError.badRequest(`\`${name}\` must be a JSON schema (an object, or a string holding one); the string is not JSON`, name);
    }
    if (isObject(parsed)) return v;
  }
  throw ApiError.badRequest(`\`${name}\` must be a JSON schema (an object, or a string holding one)`, name);
}

const SO_CONSTRAINTS = ['json', 'regex', 'choice', 'grammar', 'json_object', 'structural_tag'] as const;
/** Grammar-backend knobs of vLLM's StructuredOutputsParams that neither engine protocol carries. */
const SO_OPTIONS = ['disable_fallback', 'disable_any_whitespace', 'disable_additional_properties', 'whitespace_pattern'] as const;

/** vLLM's `structured_outputs`: exactly one of json, regex, choice, grammar, json_object, structural_tag. */
function structuredOutputs(f: Reader): GenerateConstraint {
  if (f.type('structured_outputs') !== JsonType.Object) throw ApiError.badRequest('`structured_outputs` must be an object', 'structured_outputs');
  const so = JSON.parse(f.raw('structured_outputs')!) as Record<string, unknown>;
  for (const k of Object.keys(so)) {
    if (!(SO_CONSTRAINTS as readonly string[]).includes(k) && !(SO_OPTIONS as readonly string[]).includes(k)) {
      throw ApiError.badRequest(`Unsupported parameter(s): \`structured_outputs.${k}\``, `structured_outputs.${k}`, 'unsupported_parameter');
    }
  }
  for (const k of SO_OPTIONS) {
    const v = so[k];
    if (v === undefined || v === null || v === false) continue;
    if (k === 'whitespace_pattern' ? typeof v !== 'string' : typeof v !== 'boolean') {
      throw ApiError.badRequest(`\`structured_outputs.${k}\` must be a ${k === 'whitespace_pattern' ? 'string' : 'boolean'}`, `structured_outputs.${k}`);
    }
    throw new ApiError(400, `\`structured_outputs.${k}\` cannot be delivered: neither engine protocol (SGLang scheduler, vLLM engine) has a field that carries it`, {
      param: `structured_outputs.${k}`,
      code: 'unsupported_parameter',
    });
  }
  const given = SO_CONSTRAINTS.filter((k) => so[k] !== undefined && so[k] !== null && so[k] !== false);
  if (given.length !== 1) {
    throw ApiError.badRequest(
      given.length === 0
        ? '`structured_outputs` needs one of `json`, `regex`, `choice`, `grammar`, `json_object`, `structural_tag`'
        : `\`structured_outputs\` takes one constraint, got ${given.map((k) => `\`${k}\``).join(' and ')}`,
      'structured_outputs',
    );
  }
  const k = given[0];
  const v = so[k];
  const name = `structured_outputs.${k}`;
  const str = (): string => {
    if (typeof v !== 'string' || v === '') throw ApiError.badRequest(`\`${name}\` must be a non-empty string`, name);
    return v;
  };
  switch (k) {
    case 'json': return { kind: 'json_schema', value: schemaText(v, name) };
    case 'regex': return { kind: 'regex', value: str() };
    case 'grammar': return { kind: 'ebnf', value: str() };
    case 'structural_tag': return { kind: 'structural_tag', value: str() };
    case 'json_object':
      if (v !== true) throw ApiError.badRequest(`\`${name}\` must be a boolean`, name);
      return { kind: 'json_object', value: '' };
    default: return choiceRegex(v, name);
  }
}

function guidedJson(f: Reader): GenerateConstraint {
  const t = f.type('guided_json');
  if (t === JsonType.Object) return { kind: 'json_schema', value: f.raw('guided_json')! };
  if (t === JsonType.String) {
    const text = f.string('guided_json')!;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw ApiError.badRequest('`guided_json` must be a JSON schema (an object, or a string holding one); the string is not JSON', 'guided_json');
    }
    if (!isObject(v)) throw ApiError.badRequest('`guided_json` must be a JSON schema (an object, or a string holding one)', 'guided_json');
    return { kind: 'json_schema', value: text };
  }
  throw ApiError.badRequest('`guided_json` must be a JSON schema (an object, or a string holding one)', 'guided_json');
}

function nonEmptyString(f: Reader, name: 'guided_regex' | 'guided_grammar'): string {
  const s = f.string(name)!;
  if (s === '') throw ApiError.badRequest(`\`${name}\` must not be empty`, name);
  return s;
}

function guidedChoice(f: Reader): GenerateConstraint {
  if (f.type('guided_choice') !== JsonType.Array) throw ApiError.badRequest('`guided_choice` must be an array of strings', 'guided_choice');
  return choiceRegex(JSON.parse(f.raw('guided_choice')!), 'guided_choice');
}

/** As vLLM does: an alternation of the escaped choices. */
function choiceRegex(list: unknown, name: string): GenerateConstraint {
  if (!Array.isArray(list)) throw ApiError.badRequest(`\`${name}\` must be an array of strings`, name);
  if (list.length === 0) throw ApiError.badRequest(`\`${name}\` must not be empty`, name);
  list.forEach((c, i) => {
    if (typeof c !== 'string') throw ApiError.badRequest(`\`${name}[${i}]\` must be a string`, name);
  });
  return { kind: 'regex', value: `(${(list as string[]).map(escapeRegex).join('|')})` };
}

/** The request's structured-output constraint, or undefined. Two at once is a 400. */
export function readConstraint(f: Reader): GenerateConstraint | undefined {
  const given = CONSTRAINT_FIELDS.filter((n) => f.given(n));
  if (given.length === 0) return undefined;
  const out: Array<[ConstraintField, GenerateConstraint]> = [];
  for (const name of given) {
    const c = name === 'response_format' ? responseFormat(f)
      : name === 'structured_outputs' ? structuredOutputs(f)
      : name === 'guided_json' ? guidedJson(f)
      : name === 'guided_regex' ? { kind: 'regex' as const, value: nonEmptyString(f, name) }
      : name === 'guided_grammar' ? { kind: 'ebnf' as const, value: nonEmptyString(f, name) }
      : guidedChoice(f);
    if (c) out.push([name, c]);
  }
  if (out.length > 1) {
    throw ApiError.badRequest(
      `only one structured output constraint may be given per request, got ${out.map(([n]) => `\`${n}\``).join(' and ')}`,
      out[1][0],
    );
  }
  return out[0]?.[1];
}
