// Streaming tool-call and reasoning parsers (native/core/src/parsers via napi-rs) and the
// per-parser preprocessor decisions PRE.1–PRE.6 of spec 003.
//
// One OutputParser per choice. Feed it the detokenized text of each engine chunk; it
// returns what became final. The common case (plain content) comes back as a string —
// no objects are built; otherwise an array of typed deltas. Unknown parser names throw
// (code 'InvalidArg') with the list of valid names: check them at startup.
//
//   const p = new OutputParser('hermes', 'qwen3', { promptInjectedReasoning, toolsJson });
//   for each chunk:  emit(p.push(text))     at the end:  emit(p.finish())
//   finish_reason = p.toolCallCount > 0 ? 'tool_calls' : engineReason

import { nativeAddon } from './addon.js';

export type ParserDelta =
  | { kind: 'content'; text: string }
  | { kind: 'reasoning'; text: string }
  /** A tool call begins: OpenAI delta `tool_calls[{index, id, type:'function', function:{name, arguments:''}}]`. */
  | { kind: 'tool_start'; index: number; id: string; name: string }
  /** Arguments fragment: `tool_calls[{index, function:{arguments:text}}]` (concatenate per index). */
  | { kind: 'tool_args'; index: number; text: string };

/** A string = content only (possibly ''); an array = anything else, in order. */
export type ParserOutput = string | ParserDelta[];

export interface OutputParserOptions {
  /** PRE.3: the rendered prompt ends inside reasoning (see promptInjectedReasoning()). */
  promptInjectedReasoning?: boolean;
  /** The rendered prompt ends after a closed reasoning block (see promptClosedReasoning()). */
  promptClosedReasoning?: boolean;
  /** `parallel_tool_calls: false`: at most this many tool calls (later ones are dropped). */
  maxToolCalls?: number;
  /** A call to a function not in toolsJson is content, not a tool call (chat requests). */
  onlyOfferedFunctions?: boolean;
  /** PRE.2: the request turned reasoning off (see reasoningDisabledByRequest()). */
  reasoningDisabled?: boolean;
  /** PRE.4: tool_choice. 'required'/'named' parse the guided JSON the engine was asked for. */
  toolChoice?: 'auto' | 'none' | 'required' | 'named';
  /** Function name for toolChoice 'named'. */
  namedTool?: string;
  /** The request's `tools` array as JSON text (types XML-style parameter values by schema). */
  toolsJson?: string;
  /** Deterministic ids (tests only). */
  idSeed?: number;
}

/** One row of the PRE.1–PRE.6 table (every column stated; 'N/A' where it does not apply). */
export interface ParserDecision {
  parser: string;
  kind: 'tool' | 'reasoning';
  aliases: string[];
  /** PRE.1 as data: true ⇒ default skip_special_tokens to false (request value still wins). */
  requires_special_tokens: boolean;
  pre1: string;
  pre2: string;
  pre3: string;
  pre4: string;
  pre5: string;
  pre6: string;
  markers: string;
}

type Flat = string | (string | number)[];

interface NativeOutputParser {
  push(text: string): Flat;
  finish(): Flat;
  readonly toolCallCount: number;
}

interface ParsersAddon {
  OutputParser: new (tool: string | null, reasoning: string | null, opts?: OutputParserOptions | null) => NativeOutputParser;
  toolParserNames(): string[];
  reasoningParserNames(): string[];
  parserDecisionsJson(tool: string | null, reasoning: string | null): string;
  requiresSpecialTokens(tool: string | null, reasoning: string | null): boolean;
  reasoningDisabledByRequest(reasoning: string, chatTemplateArgsJson: string | null, reasoningEffort: string | null): boolean;
  promptInjectedReasoning(reasoning: string, promptTail: string): boolean;
  reasoningStartedByRequest(reasoning: string, chatTemplateArgsJson: string | null): boolean;
  promptClosedReasoning(reasoning: string, promptTail: string): boolean;
}

const addon = nativeAddon as ParsersAddon;

/** Decodes the native flat array `[kind, ...fields]` (0 content, 1 reasoning, 2 start, 3 args). */
export function decodeDeltas(flat: (string | number)[]): ParserDelta[] {
  const out: ParserDelta[] = [];
  for (let i = 0; i < flat.length; ) {
    switch (flat[i]) {
      case 0:
        out.push({ kind: 'content', text: flat[i + 1] as string });
        i += 2;
        break;
      case 1:
        out.push({ kind: 'reasoning', text: flat[i + 1] as string });
        i += 2;
        break;
      case 2:
        out.push({ kind: 'tool_start', index: flat[i + 1] as number, id: flat[i + 2] as string, name: flat[i + 3] as string });
        i += 4;
        break;
      default:
        out.push({ kind: 'tool_args', index: flat[i + 1] as number, text: flat[i + 2] as string });
        i += 3;
        break;
    }
  }
  return out;
}

/**
 * The parsers read the request's `tools` with serde_json, which stops at 128 levels of nesting
 * (the gate allows 512; the native message reader has the same 128, docs/fields.md). A `tools`
 * the parser cannot read is the client's value: a 400 naming `tools` (ApiError.from reads
 * `apiStatus` and `param`), never a 500. Any other construction error is ours and stays one.
 */
function toolsError(err: unknown): unknown {
  const m = /^invalid parser options: tools is not JSON: (.*)$/s.exec(err instanceof Error ? err.message : '');
  if (!m) return err;
  const why = /recursion limit/.test(m[1]) ? `nested deeper than 128 levels (${m[1]})` : m[1];
  return Object.assign(new Error(`\`tools\` cannot be read by the tool-call parser: ${why}`), { apiStatus: 400, param: 'tools' });
}

/** The per-choice parser: reasoning parser first, then the tool parser over the content. */
export class OutputParser {
  private readonly native: NativeOutputParser;

  /** Throws (code 'InvalidArg') on an unknown parser name, listing the valid ones. */
  constructor(toolParser: string | null, reasoningParser: string | null, opts?: OutputParserOptions) {
    try {
      this.native = new addon.OutputParser(toolParser, reasoningParser, opts ?? null);
    } catch (err) {
      throw toolsError(err);
    }
  }

  /** Adds detokenized text; returns what became final (string = content only). */
  push(text: string): ParserOutput {
    const r = this.native.push(text);
    return typeof r === 'string' ? r : decodeDeltas(r);
  }

  /** End of the choice: flushes held text and applies the family's truncation rule. */
  finish(): ParserOutput {
    const r = this.native.finish();
    return typeof r === 'string' ? r : decodeDeltas(r);
  }

  /**
   * The native parser, for newChoiceOutput (src/native/core.ts), which takes it over: this
   * OutputParser is unusable afterwards.
   */
  handOver(): object {
    return this.native;
  }

  /** Raw form for hot loops: a string, or the flat array (see decodeDeltas). */
  pushRaw(text: string): Flat {
    return this.native.push(text);
  }

  /** Tool calls started so far: finish_reason is 'tool_calls' when > 0. */
  get toolCallCount(): number {
    return this.native.toolCallCount;
  }
}

/** Every accepted tool parser name (aliases included). */
export const toolParserNames = (): string[] => addon.toolParserNames();
/** Every accepted reasoning parser name (aliases included). */
export const reasoningParserNames = (): string[] => addon.reasoningParserNames();

/** PRE.1–PRE.6 rows of the configured pair (both null ⇒ the whole table). Throws on unknown names. */
export function parserDecisions(toolParser: string | null, reasoningParser: string | null): ParserDecision[] {
  return JSON.parse(addon.parserDecisionsJson(toolParser, reasoningParser)) as ParserDecision[];
}

/** PRE.1: default skip_special_tokens to false for this pair (an explicit request value wins). */
export const requiresSpecialTokens = (toolParser: string | null, reasoningParser: string | null): boolean =>
  addon.requiresSpecialTokens(toolParser, reasoningParser);

/**
 * PRE.2: does the request turn this reasoning parser off? `chatTemplateArgs` is the request's
 * chat_template_args object, or its JSON text as the request reader made it (thinking values
 * normalized: true/"true"/"1"/"yes"/"on"/nonzero are on).
 */
export function reasoningDisabledByRequest(
  reasoningParser: string,
  chatTemplateArgs: Record<string, unknown> | string | null | undefined,
  reasoningEffort?: string | null,
): boolean {
  return addon.reasoningDisabledByRequest(reasoningParser, argsText(chatTemplateArgs), reasoningEffort ?? null);
}

const argsText = (args: Record<string, unknown> | string | null | undefined): string | null =>
  args == null ? null : typeof args === 'string' ? args : JSON.stringify(args);

/** PRE.3 by request: chat_template_args start the output in reasoning (MiniMax M3 `thinking_mode: "enabled"`). */
export const reasoningStartedByRequest = (reasoningParser: string, chatTemplateArgs: Record<string, unknown> | string | null | undefined): boolean =>
  addon.reasoningStartedByRequest(reasoningParser, argsText(chatTemplateArgs));

/** PRE.3: the rendered prompt ends with the parser's reasoning start marker (pass its tail). */
export const promptInjectedReasoning = (reasoningParser: string, promptTail: string): boolean =>
  addon.promptInjectedReasoning(reasoningParser, promptTail.slice(-64));

/** The rendered prompt ends after the parser's reasoning end marker (thinking closed by the template). */
export const promptClosedReasoning = (reasoningParser: string, promptTail: string): boolean =>
  addon.promptClosedReasoning(reasoningParser, promptTail.slice(-64));
