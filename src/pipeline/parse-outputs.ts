// Tool-call and reasoning parsing over a choice's decoded text (spec 003). The native
// OutputParser of each choice turns content text into content, reasoning and tool-call
// events; a choice that made tool calls finishes with `tool_calls`. Which parsers run,
// and how, follows the per-parser decisions PRE.1–PRE.3 (the native table).

import { OutputParser, promptInjectedReasoning, reasoningDisabledByRequest, requiresSpecialTokens, type ParserOutput } from '../native/parsers.js';
import type { OutputEvent } from './outputs.js';
import type { FinishReason } from './postprocess.js';
import type { ServedModel } from './served-model.js';

export type ParsedEvent =
  | Exclude<OutputEvent, { kind: 'text' }>
  | { kind: 'text'; index: number; text: string; usage: Extract<OutputEvent, { kind: 'text' }>['usage'] }
  | { kind: 'reasoning'; index: number; text: string }
  | { kind: 'tool_start'; index: number; call: number; id: string; name: string }
  | { kind: 'tool_args'; index: number; call: number; text: string };

export interface ParsingPlan {
  tool: string | null;
  reasoning: string | null;
  promptInjectedReasoning: boolean;
  reasoningDisabled: boolean;
  toolsJson?: string;
  /** PRE.4: the engine was asked for guided tool-call JSON; the parsers read it back. */
  guided?: { kind: 'required' } | { kind: 'named'; name: string };
}

/** PRE.1: the skip_special_tokens default when the request leaves it out. */
export function skipSpecialTokensFor(model: ServedModel, requested: boolean | undefined): boolean {
  if (requested !== undefined) return requested;
  const { tool, reasoning } = model.parsers;
  return !(tool || reasoning) || !requiresSpecialTokens(tool, reasoning);
}

/** Whether planParsing can plan anything: with no tools and no reasoning parser it is null. */
export function mayParse(model: ServedModel, hasTools: boolean): boolean {
  return hasTools || model.parsers.reasoning !== null;
}

/**
 * Decide how a request's output is parsed: the tool parser only when the request has tools
 * and tool_choice is not "none" (PRE.5), reasoning unless the request turned it off (PRE.2),
 * starting inside reasoning when the template already opened it (PRE.3). tool_choice
 * required / named (PRE.4) read the guided JSON back into calls, with or without a
 * configured tool parser. Null: no parsing.
 */
export function planParsing(
  model: ServedModel,
  opts: {
    hasTools: boolean;
    toolChoiceNone: boolean;
    templateKwargs: string | null;
    promptIds: Uint32Array;
    toolsJson?: string;
    toolChoice?: { kind: 'none' | 'auto' | 'required' } | { kind: 'named'; name: string };
  },
): ParsingPlan | null {
  if (!mayParse(model, opts.hasTools)) return null;
  const tc = opts.toolChoice;
  const guided: ParsingPlan['guided'] = !opts.hasTools || !tc ? undefined : tc.kind === 'named' ? { kind: 'named', name: tc.name } : tc.kind === 'required' ? { kind: 'required' } : undefined;
  const tool = opts.hasTools && !opts.toolChoiceNone ? model.parsers.tool : null;
  const reasoning = model.parsers.reasoning;
  if (!tool && !reasoning && !guided) return null;
  const kwargs = opts.templateKwargs ? (JSON.parse(opts.templateKwargs) as Record<string, unknown>) : null;
  const effort = typeof kwargs?.reasoning_effort === 'string' ? kwargs.reasoning_effort : null;
  const reasoningDisabled = reasoning ? reasoningDisabledByRequest(reasoning, kwargs, effort) : false;
  const tail = model.native.decode(opts.promptIds.subarray(Math.max(0, opts.promptIds.length - 16)), false);
  return {
    tool,
    reasoning,
    reasoningDisabled,
    promptInjectedReasoning: reasoning !== null && !reasoningDisabled && promptInjectedReasoning(reasoning, tail),
    toolsJson: opts.toolsJson,
    guided,
  };
}

/** The parsed events of a request's outputs; the outputs themselves when nothing is parsed. */
export function parseOutputs(events: AsyncIterable<OutputEvent>, plan: ParsingPlan | null, n: number): AsyncIterable<ParsedEvent> {
  // No parser: no generator layer either (each would cost promises per event).
  return plan ? parsed(events, plan, n) : events;
}

async function* parsed(events: AsyncIterable<OutputEvent>, plan: ParsingPlan, n: number): AsyncGenerator<ParsedEvent> {
  const parsers: OutputParser[] = Array.from(
    { length: n },
    () =>
      new OutputParser(plan.tool, plan.reasoning, {
        promptInjectedReasoning: plan.promptInjectedReasoning,
        reasoningDisabled: plan.reasoningDisabled,
        toolsJson: plan.toolsJson,
        toolChoice: plan.guided?.kind,
        namedTool: plan.guided?.kind === 'named' ? plan.guided.name : undefined,
      }),
  );
  for await (const ev of events) {
    if (ev.kind === 'text') {
      yield* expand(ev.index, parsers[ev.index].push(ev.text), ev.usage);
      continue;
    }
    if (ev.kind === 'finish') {
      const p = parsers[ev.index];
      yield* expand(ev.index, p.finish(), ev.usage);
      const reason: FinishReason = p.toolCallCount > 0 && ev.reason !== 'length' ? 'tool_calls' : ev.reason;
      yield { ...ev, reason };
      continue;
    }
    yield ev;
  }
}

function* expand(index: number, out: ParserOutput, usage: Extract<OutputEvent, { kind: 'text' }>['usage']): Generator<ParsedEvent> {
  if (typeof out === 'string') {
    if (out) yield { kind: 'text', index, text: out, usage };
    return;
  }
  for (const d of out) {
    if (d.kind === 'content') {
      if (d.text) yield { kind: 'text', index, text: d.text, usage };
    } else if (d.kind === 'reasoning') {
      if (d.text) yield { kind: 'reasoning', index, text: d.text };
    } else if (d.kind === 'tool_start') yield { kind: 'tool_start', index, call: d.index, id: d.id, name: d.name };
    else yield { kind: 'tool_args', index, call: d.index, text: d.text };
  }
}
