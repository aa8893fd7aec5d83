// Debug endpoints that run one named parser over given text, the way SGLang's router
// exposes its parsers:
//   POST /parse/function_call {text, tool_call_parser, tools?} -> {normal_text, calls: [{tool_index, name, parameters}]}
//   POST /parse/reasoning     {text, reasoning_parser}         -> {normal_text, reasoning_text}
// The text is parsed whole (push then finish), with the same native parsers as generation.

import { ApiError } from '../protocol/errors.js';
import { admit } from '../protocol/admission.js';
import { OutputParser, reasoningParserNames, toolParserNames, type ParserOutput } from '../native/parsers.js';
import type { AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { readJsonObject } from './json-body.js';

function admitKeys(body: Record<string, unknown>, allowed: readonly string[], ignoreUnsupported: boolean): void {
  admit(Object.keys(body).filter((k) => !allowed.includes(k)), '', ignoreUnsupported);
}

function textOf(body: Record<string, unknown>): string {
  if (body.text === undefined) throw ApiError.badRequest('`text` is required', 'text');
  if (typeof body.text !== 'string') throw ApiError.badRequest('`text` must be a string', 'text');
  return body.text;
}

function parserName(body: Record<string, unknown>, field: string, valid: string[]): string {
  const v = body[field];
  if (v === undefined) throw ApiError.badRequest(`\`${field}\` is required (valid names: ${valid.join(', ')})`, field);
  if (typeof v !== 'string' || !valid.includes(v)) {
    throw ApiError.badRequest(`unknown ${field} ${JSON.stringify(v)}; valid names: ${valid.join(', ')}`, field, 'unknown_parser');
  }
  return v;
}

interface ChatTool {
  type: 'function';
  function: { name: string; parameters?: unknown };
}

/** `tools` in the OpenAI chat shape (the flat {type, name, parameters} Responses shape is converted). */
function chatTools(tools: unknown): ChatTool[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw ApiError.badRequest('`tools` must be an array', 'tools');
  return tools.map((t, i) => {
    const o = t as { name?: unknown; parameters?: unknown; function?: { name?: unknown; parameters?: unknown } } | null;
    const fn = o && typeof o === 'object' ? (o.function && typeof o.function === 'object' ? o.function : o) : undefined;
    if (!fn || typeof fn.name !== 'string' || fn.name === '') throw ApiError.badRequest(`\`tools[${i}]\` must be a function tool with a name`, 'tools');
    return { type: 'function', function: { name: fn.name, parameters: fn.parameters } };
  });
}

interface Collected {
  content: string;
  reasoning: string;
  calls: { name: string; parameters: string }[];
}

function collect(into: Collected, out: ParserOutput): void {
  if (typeof out === 'string') {
    into.content += out;
    return;
  }
  for (const d of out) {
    if (d.kind === 'content') into.content += d.text;
    else if (d.kind === 'reasoning') into.reasoning += d.text;
    else if (d.kind === 'tool_start') into.calls[d.index] = { name: d.name, parameters: '' };
    else into.calls[d.index].parameters += d.text;
  }
}

function run(p: OutputParser, text: string): Collected {
  const c: Collected = { content: '', reasoning: '', calls: [] };
  collect(c, p.push(text));
  collect(c, p.finish());
  return c;
}

export function parseFunctionCall(ctx: AppContext) {
  return (ex: Exchange): void => {
    const body = readJsonObject(ex);
    admitKeys(body, ['text', 'tool_call_parser', 'tools'], ctx.ignoreUnsupportedFields);
    const text = textOf(body);
    const name = parserName(body, 'tool_call_parser', toolParserNames());
    const tools = chatTools(body.tools);
    const names = tools.map((t) => t.function.name);
    const p = new OutputParser(name, null, tools.length > 0 ? { toolsJson: JSON.stringify(tools) } : undefined);
    const r = run(p, text);
    const calls = r.calls.map((c) => ({ tool_index: names.length > 0 ? names.indexOf(c.name) : null, name: c.name, parameters: c.parameters }));
    ex.sendJson(200, JSON.stringify({ normal_text: r.content, calls }));
  };
}

export function parseReasoning(ctx: AppContext) {
  return (ex: Exchange): void => {
    const body = readJsonObject(ex);
    admitKeys(body, ['text', 'reasoning_parser'], ctx.ignoreUnsupportedFields);
    const text = textOf(body);
    const name = parserName(body, 'reasoning_parser', reasoningParserNames());
    const r = run(new OutputParser(null, name), text);
    ex.sendJson(200, JSON.stringify({ normal_text: r.content, reasoning_text: r.reasoning }));
  };
}
