// How a request's output is parsed for tool calls and reasoning (spec 003): the plan that
// each choice's native ChoiceOutput runs (postprocess.ts), in the same native push as the
// detokenizer, so content, reasoning and tool-call events come out of ChoiceOutputs
// (outputs.ts); a choice that made tool calls finishes with `tool_calls`. Which parsers
// run, and how, follows the per-parser decisions PRE.1–PRE.3 (the native table).

import { promptClosedReasoning, promptInjectedReasoning, reasoningDisabledByRequest, reasoningStartedByRequest, requiresSpecialTokens } from '../native/parsers.js';
import type { ServedModel } from './served-model.js';

import type { ParsingPlan } from './postprocess.js';

export type { ParsedEvent } from './outputs.js';
export type { ParsingPlan } from './postprocess.js';

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
    /** The template kwargs' JSON text, thinking values normalised (the request reader's). */
    templateKwargs: string | null;
    /** The reasoning effort the template gets (the kwargs' reasoning_effort, else the request's), as the reader found it. */
    reasoningEffort: string | null;
    promptIds: Uint32Array;
    toolsJson?: string;
    toolChoice?: { kind: 'none' | 'auto' | 'required' } | { kind: 'named'; name: string };
    /** `parallel_tool_calls` (default true): false keeps at most one call. */
    parallelToolCalls?: boolean;
  },
): ParsingPlan | null {
  if (!mayParse(model, opts.hasTools)) return null;
  const tc = opts.toolChoice;
  const guided: ParsingPlan['guided'] = !opts.hasTools || !tc ? undefined : tc.kind === 'named' ? { kind: 'named', name: tc.name } : tc.kind === 'required' ? { kind: 'required' } : undefined;
  const tool = opts.hasTools && !opts.toolChoiceNone ? model.parsers.tool : null;
  const reasoning = model.parsers.reasoning;
  if (!tool && !reasoning && !guided) return null;
  // The reader's kwargs text goes to the native check as it is (no parse here).
  const reasoningDisabled = reasoning ? reasoningDisabledByRequest(reasoning, opts.templateKwargs, opts.reasoningEffort) : false;
  const tail = model.native.decode(opts.promptIds.subarray(Math.max(0, opts.promptIds.length - 16)), false);
  return {
    tool,
    reasoning,
    reasoningDisabled,
    promptInjectedReasoning: reasoning !== null && !reasoningDisabled && (reasoningStartedByRequest(reasoning, opts.templateKwargs) || promptInjectedReasoning(reasoning, tail)),
    promptClosedReasoning: reasoning !== null && !reasoningDisabled && promptClosedReasoning(reasoning, tail),
    ...(opts.parallelToolCalls === false ? { maxToolCalls: 1 } : {}),
    toolsJson: opts.toolsJson,
    guided,
  };
}
