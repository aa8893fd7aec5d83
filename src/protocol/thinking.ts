// `thinking` ({type: enabled|disabled, budget_tokens}) and `reasoning_effort` on chat
// completions, normalised into chat template kwargs before rendering (spec 003, PRE.2/PRE.3):
// the template, the reasoning-parser gate and the output parser then all see one value.
//
//  - `thinking` sets both `thinking` and `enable_thinking` (the names chat templates gate
//    on: Kimi/DeepSeek use `thinking`, Qwen3/Nemotron/Gemma use `enable_thinking`) to a
//    JSON boolean, unless the request's template kwargs already name that key.
//  - Values of `thinking` / `enable_thinking` given in the template kwargs are normalised
//    to JSON booleans: true, "true", "1", "yes", "on" and nonzero numbers are enabled.
//  - `reasoning_effort` becomes the template kwarg `reasoning_effort` (as vLLM passes it;
//    gpt-oss and Mistral templates read it), unless the kwargs name it already.
//  - `budget_tokens` is type-checked; no engine protocol carries a thinking budget, so it is
//    advisory (Anthropic documents it as a target, not a limit).

import { ApiError } from './errors.js';
import { JsonType, type Fields } from './fields.js';

export const THINKING_FIELDS = ['thinking', 'reasoning_effort'] as const;
export type ThinkingField = (typeof THINKING_FIELDS)[number];

export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;

const NORMALISED_KEYS = ['thinking', 'enable_thinking'] as const;

/** Spec 003's truthiness for thinking arguments. */
export function thinkingEnabled(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return ['true', '1', 'yes', 'on'].includes(v.trim().toLowerCase());
  return false;
}

/** The `thinking` field: enabled/disabled, or undefined when absent or null. */
export function readThinking(f: Pick<Fields<'thinking'>, 'type' | 'raw'>): boolean | undefined {
  const t = f.type('thinking');
  if (t === undefined || t === JsonType.Null) return undefined;
  if (t !== JsonType.Object) throw ApiError.badRequest('`thinking` must be an object like {"type": "enabled", "budget_tokens": 1024}', 'thinking');
  const v = JSON.parse(f.raw('thinking')!) as Record<string, unknown>;
  for (const k of Object.keys(v)) {
    if (k !== 'type' && k !== 'budget_tokens') throw ApiError.badRequest(`Unsupported parameter(s): \`thinking.${k}\``, `thinking.${k}`, 'unsupported_parameter');
  }
  if (v.type !== 'enabled' && v.type !== 'disabled') {
    throw ApiError.badRequest(`\`thinking.type\` must be "enabled" or "disabled", got ${JSON.stringify(v.type ?? null)}`, 'thinking.type');
  }
  const b = v.budget_tokens;
  if (b !== undefined && b !== null && (typeof b !== 'number' || !Number.isInteger(b) || b < 1)) {
    throw ApiError.badRequest('`thinking.budget_tokens` must be a positive integer', 'thinking.budget_tokens');
  }
  return v.type === 'enabled';
}

export function readReasoningEffort(f: Pick<Fields<'reasoning_effort'>, 'string'>): string | undefined {
  const e = f.string('reasoning_effort');
  if (e === undefined) return undefined;
  if (!(REASONING_EFFORTS as readonly string[]).includes(e)) {
    throw ApiError.badRequest(`\`reasoning_effort\` must be one of ${REASONING_EFFORTS.map((x) => `"${x}"`).join(', ')}, got ${JSON.stringify(e)}`, 'reasoning_effort');
  }
  return e;
}

/** A request's own template kwargs: their JSON object text, and their `reasoning_effort` as scanned. */
export interface GivenKwargs {
  text: string;
  /** A string value; null for another type; undefined when the kwargs do not name it. */
  reasoningEffort: string | null | undefined;
}

/** What the template and the parsing plan get of a request's kwargs, thinking and reasoning effort. */
export interface TemplateKwargs {
  /** The kwargs' JSON text the template gets (thinking values normalised), or null. */
  text: string | null;
  /** The reasoning effort in them (a string), else null: the parsing plan reads it (PRE.2). */
  reasoningEffort: string | null;
}

/**
 * Merge `thinking` / `reasoning_effort` into the request's template kwargs (as its reader
 * scanned them, or null) and normalise thinking values: the kwargs the template gets, and
 * the reasoning effort among them, each read once for both the template and the plan.
 */
export function templateKwargsWithThinking(f: Pick<Fields<ThinkingField>, 'type' | 'raw' | 'string'>, given: GivenKwargs | null): TemplateKwargs {
  const thinking = readThinking(f);
  const effort = readReasoningEffort(f);
  const kwargs = given?.text ?? null;
  // The kwargs' own reasoning_effort wins over the request's field (as below).
  const reasoningEffort = given && given.reasoningEffort !== undefined ? given.reasoningEffort : (effort ?? null);
  if (thinking === undefined && effort === undefined && (kwargs === null || !/"(enable_)?thinking"/.test(kwargs))) return { text: kwargs, reasoningEffort };
  const obj = kwargs ? (JSON.parse(kwargs) as Record<string, unknown>) : {};
  for (const k of NORMALISED_KEYS) {
    if (k in obj && obj[k] !== null) obj[k] = thinkingEnabled(obj[k]);
    else if (thinking !== undefined) obj[k] = thinking;
  }
  if (effort !== undefined && !('reasoning_effort' in obj)) obj.reasoning_effort = effort;
  return { text: JSON.stringify(obj), reasoningEffort };
}
