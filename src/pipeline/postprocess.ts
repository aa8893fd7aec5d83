// Turn the engine's token stream for one choice back into what a response needs, with
// the request's stop rules and its parsing plan: one native ChoiceOutput per choice
// detokenizes incrementally (never half a character), holds back a possible stop string
// until it is decided, hides stop tokens, decides when the choice is over (stop string,
// stop token, EOS, max tokens), and runs the reasoning and tool-call parsers over the
// released text (spec 003), all in one native call per engine message.

import { newChoiceOutput, type ChoiceOutput, type ChoiceResult } from '../native/core.js';
import { OutputParser } from '../native/parsers.js';
import type { ServedModel } from './served-model.js';

/** How a choice's text is parsed (planned by parse-outputs.ts planParsing). */
export interface ParsingPlan {
  tool: string | null;
  reasoning: string | null;
  promptInjectedReasoning: boolean;
  /** The prompt closed the reasoning block (qwen3 then starts in content, no hold). */
  promptClosedReasoning?: boolean;
  /** `parallel_tool_calls: false`: at most one call. */
  maxToolCalls?: number;
  reasoningDisabled: boolean;
  toolsJson?: string;
  /** PRE.4: the engine was asked for guided tool-call JSON; the parsers read it back. */
  guided?: { kind: 'required' } | { kind: 'named'; name: string };
}

export type FinishReason = 'stop' | 'length' | 'abort' | 'tool_calls' | 'error';

/** What a choice's output must honour; the engine is told the token-level parts too. */
export interface OutputRules {
  skipSpecialTokens: boolean;
  stop?: string[];
  stopTokenIds?: number[];
  includeStopStrInOutput?: boolean;
  minTokens?: number;
  ignoreEos?: boolean;
  maxTokens?: number;
}

export class ChoiceDecoder {
  private readonly out: ChoiceOutput;
  /** The choice is over (learnt from a push's return value). */
  private done = false;

  constructor(model: ServedModel, rules: OutputRules, plan: ParsingPlan | null = null) {
    const parser = plan
      ? new OutputParser(plan.tool, plan.reasoning, {
          promptInjectedReasoning: plan.promptInjectedReasoning,
          promptClosedReasoning: plan.promptClosedReasoning,
          maxToolCalls: plan.maxToolCalls,
          onlyOfferedFunctions: plan.toolsJson !== undefined,
          reasoningDisabled: plan.reasoningDisabled,
          toolsJson: plan.toolsJson,
          toolChoice: plan.guided?.kind,
          namedTool: plan.guided?.kind === 'named' ? plan.guided.name : undefined,
        }).handOver()
      : null;
    this.out = newChoiceOutput(model.native, rules, parser);
  }

  /**
   * The deltas these tokens made final: a string (content only, possibly '') while the
   * choice goes on, else `[over, kind, ...fields]` (see decodeChoiceDeltas).
   */
  push(tokenIds: readonly number[]): ChoiceResult {
    if (this.done) return OVER;
    // One token per chunk is the streaming norm: a single-number native call.
    const r = tokenIds.length === 1 ? this.out.pushToken(tokenIds[0]!) : this.out.pushTokens(tokenIds);
    if (typeof r !== 'string' && r[0] === 1) this.done = true;
    return r;
  }

  /** The engine ended the choice: the held text and the parser's flush, `[1, kind, ...]`. */
  finish(): (string | number)[] {
    if (this.done) return OVER;
    this.done = true;
    return this.out.finish();
  }

  /** The choice is over (a stop or the token limit here, or finish()). */
  get finished(): boolean {
    return this.done;
  }

  /** Portico's own finish reason; null when the engine ended the choice. */
  get finishReason(): 'stop' | 'length' | null {
    return this.out.finishReason;
  }

  get matchedStop(): string | number | null {
    return this.out.matchedStop;
  }

  /** Generated tokens that count for usage (through the stop token; none after it). */
  get completionTokens(): number {
    return this.out.generatedTokens;
  }

  /** Tool calls started so far (finish_reason tool_calls unless length). */
  get toolCallCount(): number {
    return this.out.toolCallCount;
  }
}

const OVER: (string | number)[] = Object.freeze([1]) as unknown as (string | number)[];

/** Map an engine finish reason onto the OpenAI vocabulary. */
export function finishReasonOf(engineReason: string): FinishReason {
  switch (engineReason) {
    case 'length':
      return 'length';
    case 'abort':
      return 'abort';
    default:
      return 'stop';
  }
}
