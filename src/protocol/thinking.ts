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

/**
 * Merge `thinking` / `reasoning_effort` into the request's template kwargs (raw JSON object
 * text or null) and normalise thinking values. Returns the kwargs text the template gets.
 */
export function templateKwargsWithThinking(f: Pick<Fields<ThinkingField>, 'type' | 'raw' | 'string'>, kwargs: string | null): string | null {
  const thinking = readThinking(f);
  const effort = readReasoningEffort(f);
  if (thinking === undefined && effort === undefined && (kwargs === null || !/"(enable_)?thinking"/.test(kwargs))) return kwargs;
  const obj = kwargs ? (JSON.parse(kwargs) as Record<string, unknown>) : {};
  for (const k of NORMALISED_KEYS) {
    if (k in obj && obj[k] !== null) obj[k] = thinkingEnabled(obj[k]);
    else if (thinking !== undefined) obj[k] = thinking;
  }
  if (effort !== undefined && !('reasoning_effort' in obj)) obj.reasoning_effort = effort;
  return JSON.stringify(obj);
}
