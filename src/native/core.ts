// The native core (native/core via native/node, napi-rs): model card, tokenizer, chat
// template and incremental detokenizer. Messages go in as byte spans of the request body
// and token ids come back as Uint32Arrays — no JS object trees on the hot path.
// See /work/shared/DESIGN.md ("Bytes in, bytes out").
//
// Errors: every method throws a plain Error. `code === 'InvalidArg'` means the request is at
// fault (bad messages JSON, template raise_exception, bad kwargs, bad span): answer 400 with
// `message` (e.g. "chat template error: ...", "invalid messages JSON: ... at line 1 column 17").
// Anything else (`code === 'GenericFailure'`) is a server-side failure.

import { nativeAddon } from './addon.js';

export interface ModelInfo {
  /** config.json max_position_embeddings (or its equivalents); null when unknown. */
  contextLength: number | null;
  /** generation_config.json ∪ config.json ∪ tokenizer eos_token ids. */
  eosTokenIds: number[];
  bosToken: string | null;
  eosToken: string | null;
  /** Vocabulary size including added tokens. */
  vocabSize: number;
  hasChatTemplate: boolean;
  padToken: string | null;
  unkToken: string | null;
  /** Ids of the tokens above (null when unset or not in the vocabulary). */
  bosTokenId: number | null;
  eosTokenId: number | null;
  padTokenId: number | null;
  unkTokenId: number | null;
  /** Named special tokens of tokenizer_config.json (`*_token` keys, `extra_special_tokens`). */
  specialTokens: SpecialToken[];
  /** tokenizer_config.json `additional_special_tokens`, in order. */
  additionalSpecialTokens: SpecialToken[];
  /** The content shape the chat template expects ("openai": a list of parts; "string"); null without a template. */
  contentFormat: 'openai' | 'string' | null;
}

/** A special token: its name (`bos_token`, `image_token`; the content for additional ones). */
export interface SpecialToken {
  name: string;
  content: string;
  /** Null when the token is not in the vocabulary. */
  id: number | null;
}

/** A loaded Hugging Face model folder (tokenizer.json + optional configs). */
export interface Model {
  info(): ModelInfo;
  encode(text: string, addSpecialTokens: boolean): Uint32Array;
  /**
   * encode on the libuv thread pool, for long texts. With the hand-written encoder (Qwen2/3,
   * Llama 3, DeepSeek V3 tokenizers) encode costs ~0.01-0.1 µs/byte; other tokenizers ~0.3-1.
   */
  encodeAsync(text: string, addSpecialTokens: boolean): Promise<Uint32Array>;
  /** Several texts in one call (parallel on the tokenizer's thread pool). */
  encodeBatch(texts: string[], addSpecialTokens: boolean): Uint32Array[];
  /**
   * encodeChat / encodeChatAsync split the rendered prompt at special tokens and serve long
   * pieces (≥ 256 B: system prompt, tools, earlier turns) from a per-model cache (64 MiB, LRU);
   * ids are identical to a full encode. These expose its counters (for /metrics) and a reset.
   */
  prefixCacheStats(): { enabled: boolean; entries: number; bytes: number; hits: number; misses: number };
  clearPrefixCache(): void;
  decode(ids: Uint32Array, skipSpecialTokens: boolean): string;
  tokenToId(token: string): number | null;
  idToToken(id: number): string | null;
  /**
   * Renders the chat template over `body[msgStart, msgEnd)` (the messages JSON array) and
   * `body[toolsStart, toolsEnd)` (the tools array, or -1/-1). `kwargsJson` is a JSON object
   * of extra template kwargs (e.g. `{"enable_thinking":false}`) or null.
   */
  renderChat(
    body: Uint8Array, msgStart: number, msgEnd: number, toolsStart: number, toolsEnd: number,
    addGenerationPrompt: boolean, kwargsJson: string | null,
  ): string;
  /** renderChat + encode without adding special tokens (the template writes BOS). */
  encodeChat(
    body: Uint8Array, msgStart: number, msgEnd: number, toolsStart: number, toolsEnd: number,
    addGenerationPrompt: boolean, kwargsJson: string | null,
  ): Uint32Array;
  /** encodeChat on the libuv thread pool, for long prompts (keeps the event loop free). */
  encodeChatAsync(
    body: Uint8Array, msgStart: number, msgEnd: number, toolsStart: number, toolsEnd: number,
    addGenerationPrompt: boolean, kwargsJson: string | null,
  ): Promise<Uint32Array>;
  /** The messages' text concatenated (no separator, no template, no special tokens), tokenized. */
  encodeRawMessages(body: Uint8Array, msgStart: number, msgEnd: number): Uint32Array;
}

export interface ModelConstructor {
  /**
   * Loads a model folder; throws "not a model folder: <path> (...)" when it is not one.
   * `chatTemplateJson`: the JSON text of a `chat_template` value (a template string, or a
   * list of named templates) that replaces the folder's (--chat-template).
   */
  load(dir: string, chatTemplateJson?: string | null): Model;
}

/** One per generated sequence: turns token ids into text as they arrive. */
export interface Detokenizer {
  /** Adds ids; returns only the text that became final (never half a character). */
  push(ids: Uint32Array): string;
  /** The text still held back; call once at the end. */
  finish(): string;
}

export interface DetokenizerConstructor {
  new (model: Model, skipSpecialTokens: boolean): Detokenizer;
}

/** Per-choice output options (all optional), with vLLM's SamplingParams semantics. */
export interface SequenceOptions {
  /** Drop special tokens from the text (default true). */
  skipSpecialTokens?: boolean;
  /** Accepted for the protocol; no effect with fast (tokenizer.json) tokenizers, as in vLLM. */
  spacesBetweenSpecialTokens?: boolean;
  /** Stop strings: the text before the first one to complete is emitted, then the sequence ends. */
  stop?: string[];
  /** Request stop_token_ids: end the sequence; their text is hidden (unless includeStopStrInOutput). */
  stopTokenIds?: number[];
  /** Emit the matched stop string (and a stop token's text) too (default false). */
  includeStopStrInOutput?: boolean;
  /** Stop strings, stop ids and EOS do not count until more than this many tokens were generated. */
  minTokens?: number;
  /** The model's EOS ids do not stop the sequence (request stopTokenIds still do). */
  ignoreEos?: boolean;
  /** After this many generated tokens the sequence ends with finishReason 'length'. */
  maxTokens?: number;
}

/**
 * One per generated choice: the incremental detokenizer plus stop handling. Feed it every
 * token id the engine sends; send the returned text to the client. A partial stop string is
 * held back (never emitted while it may still complete). Create with `newSequence`.
 */
export interface Sequence {
  /**
   * Adds one generated id (the per-token path: one plain Node-API call, no array allocated).
   * Returns the visible text that became final ('' if none) while the sequence runs, and
   * `[text]` once it has finished (a stop or the token limit ended it, on this push or
   * before): then read finishReason / matchedStop. Pushes after the end release nothing.
   */
  pushToken(id: number): string | [string];
  /** pushToken for several ids at once (a chunk of more than one token). */
  pushTokens(ids: readonly number[]): string | [string];
  /** Adds ids; returns the visible text that became final ('' if none). No-op once finished. */
  push(ids: Uint32Array): string;
  /** End of stream (the engine finished or was aborted): returns the text still held. Idempotent. */
  finish(): string;
  /** True once a stop or the token limit ended the sequence (then abort the engine request). */
  readonly finished: boolean;
  /** 'stop' (stop string, stop id or EOS), 'length' (maxTokens), null if not decided here. */
  readonly finishReason: 'stop' | 'length' | null;
  /** nvext stop_reason: the stop string or request stop token id; null for EOS, length, or none. */
  readonly matchedStop: string | number | null;
  /** Ids counted as generated (the stop token included; ids after the end are not counted). */
  readonly generatedTokens: number;
}

/** Bits of the native constructor's `flags` (native/node/src/output_flags.rs). */
const enum OutputFlag {
  SkipSpecialTokens = 1,
  SpacesBetweenSpecialTokens = 2,
  IncludeStopStrInOutput = 4,
  IgnoreEos = 8,
}

/** The addon's constructor: positional, so a per-choice construction reads no options object. */
interface SequenceConstructor {
  new (
    model: Model, flags: number, minTokens: number, maxTokens: number | null,
    stop: readonly string[] | null, stopTokenIds: readonly number[] | null,
  ): Sequence;
}

/**
 * One per generated choice, the whole per-token path in one native object (native/core
 * choice.rs): detokenizer, stop jail and limits (as Sequence), then the choice's output
 * parser (reasoning, tool calls) over the released text. One call per engine message.
 *
 * A push returns a string while the choice goes on and only content came out (possibly
 * ''); otherwise the flat array `[over, kind, ...fields, ...]` (see decodeChoiceDeltas):
 * `over` is 1 once the choice ended (a stop or the token limit here, or finish()), and
 * then the parser has been flushed too. Create with `newChoiceOutput`.
 */
export interface ChoiceOutput {
  /** Adds one generated id (one number crosses, no array). */
  pushToken(id: number): ChoiceResult;
  /** Adds the ids of one engine message. */
  pushTokens(ids: readonly number[]): ChoiceResult;
  /** The engine ended the choice: held text and the parser's flush (always an array; [1] once over). */
  finish(): (string | number)[];
  /** 'stop' (stop string, stop id or EOS), 'length' (maxTokens), null if the engine decided. */
  readonly finishReason: 'stop' | 'length' | null;
  /** nvext stop_reason: the stop string or request stop token id; null for EOS, length, or none. */
  readonly matchedStop: string | number | null;
  /** Ids counted as generated (the stop token included). */
  readonly generatedTokens: number;
  /** Tool calls started so far. */
  readonly toolCallCount: number;
}

/** A string: content only, the choice goes on. An array: `[over, kind, ...fields, ...]`. */
export type ChoiceResult = string | (string | number)[];

/** An OutputParser handed to newChoiceOutput (its native object; unusable afterwards). */
export type NativeParserHandle = object;

interface ChoiceOutputConstructor {
  new (
    model: Model, flags: number, minTokens: number, maxTokens: number | null,
    stop: readonly string[] | null, stopTokenIds: readonly number[] | null, parser: NativeParserHandle | null,
  ): ChoiceOutput;
}

interface CoreAddon {
  Model: ModelConstructor;
  Detokenizer: DetokenizerConstructor;
  /** Defines the Sequence class (written against Node-API directly: native/node/src/sequence.rs). */
  sequenceClass(): SequenceConstructor;
  /** Defines the ChoiceOutput class (native/node/src/choice.rs). */
  choiceOutputClass(): ChoiceOutputConstructor;
}

const addon = nativeAddon as CoreAddon;

export const Model: ModelConstructor = addon.Model;
export const Detokenizer: DetokenizerConstructor = addon.Detokenizer;
const SequenceClass = addon.sequenceClass();
const ChoiceOutputClass = addon.choiceOutputClass();

const NO_OPTIONS: SequenceOptions = {};

/** A Sequence for one choice; defaults: skip special tokens, no stops, no limits. */
export function newSequence(model: Model, o: SequenceOptions = NO_OPTIONS): Sequence {
  return new SequenceClass(
    model, flagsOf(o), o.minTokens ?? 0, o.maxTokens ?? null,
    o.stop?.length ? o.stop : null, o.stopTokenIds?.length ? o.stopTokenIds : null,
  );
}

/** A ChoiceOutput for one choice: Sequence options, and the choice's parser (or null: content only). */
export function newChoiceOutput(model: Model, o: SequenceOptions, parser: NativeParserHandle | null): ChoiceOutput {
  return new ChoiceOutputClass(
    model, flagsOf(o), o.minTokens ?? 0, o.maxTokens ?? null,
    o.stop?.length ? o.stop : null, o.stopTokenIds?.length ? o.stopTokenIds : null, parser,
  );
}

function flagsOf(o: SequenceOptions): number {
  return (
    ((o.skipSpecialTokens ?? true) ? OutputFlag.SkipSpecialTokens : 0) |
    ((o.spacesBetweenSpecialTokens ?? true) ? OutputFlag.SpacesBetweenSpecialTokens : 0) |
    (o.includeStopStrInOutput ? OutputFlag.IncludeStopStrInOutput : 0) |
    (o.ignoreEos ? OutputFlag.IgnoreEos : 0)
  );
}

/** True when a native error is the client's fault (answer 400 with its message). */
export function isClientError(err: unknown): boolean {
  return err instanceof Error && (err as Error & { code?: unknown }).code === 'InvalidArg';
}
