// Engine-neutral contract between Portico and a GPU engine worker.
// Everything above src/engine talks to workers through EngineClient only;
// protocol specifics (SGLang scheduler today, vLLM later) stay in the
// implementation files.

/** One generation request, already tokenized. */
export interface GenerateParams {
  /** Unique per worker; also the handle for abort(). */
  requestId: string;
  inputIds: Uint32Array;
  /** Prompt text, for engine logs only. Optional. */
  originalText?: string;
  /** Unset = engine default (rest of the context window). */
  maxNewTokens?: number;
  minNewTokens?: number;
  temperature?: number;
  topP?: number;
  /** -1 or unset = disabled. */
  topK?: number;
  minP?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  repetitionPenalty?: number;
  /** Token ids that end a choice (in addition to EOS unless ignoreEos). */
  stopTokenIds?: number[];
  ignoreEos?: boolean;
  /**
   * Sampling seed, a 64-bit integer. vLLM's protocol carries an int32 (a wider seed is
   * refused); SGLang's has no seed field, so it travels in SamplingParams.custom_params
   * as `seed`, a decimal string (a Struct number is a double).
   */
  seed?: bigint;
  /** Parallel choices; events carry their `index`. Default 1. */
  n?: number;
  /**
   * At most one structured-output constraint (guided decoding). `value` is
   * the JSON schema text, the regex, or the EBNF grammar / structural tag
   * text; for 'json_object' (any JSON object) it is ignored. Engines map it
   * onto their own constraint field.
   */
  constraint?: GenerateConstraint;
  /** Token id → additive bias in [-100, 100]. */
  logitBias?: Map<number, number>;
  /** Report the sampled token's log-probability per output token. */
  logprobs?: boolean;
  /** Also report this many most likely alternatives per position (0..20); needs logprobs. */
  topLogprobs?: number;
  /**
   * Report the prompt tokens' log-probabilities too, with this many alternatives each
   * (unset = no prompt logprobs). The SGLang protocol has one alternatives count for both,
   * so there the larger of topLogprobs and this is used.
   */
  promptLogprobs?: number;
  /** Adapter id already loaded on the worker. */
  loraId?: string;
  /** Pin to one data-parallel rank of the worker. */
  dataParallelRank?: number;
  /**
   * true: the engine sends token chunks as they are produced.
   * false: the engine sends one `done` per choice carrying all `outputIds`.
   */
  stream: boolean;
}

export type ConstraintKind = 'json_schema' | 'json_object' | 'regex' | 'ebnf' | 'structural_tag';

export interface GenerateConstraint {
  kind: ConstraintKind;
  value: string;
}

/** Log-probabilities of generated tokens, parallel to the tokens they describe. */
export interface TokenLogprobs {
  /** One per token: log-probability of the sampled token. */
  logprobs: number[];
  /** One per token when alternatives were asked for: most likely ids first. */
  top?: Array<{ tokenIds: number[]; logprobs: number[] }>;
}

/** Newly generated tokens of one choice (stream mode). */
export interface TokenChunk {
  /** New tokens since the previous chunk of this choice (may be several). */
  tokenIds: number[];
  /** Running totals for this choice. */
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** Choice index (0 when n = 1). */
  index: number;
  /** Present when logprobs were asked for: one entry per id in tokenIds. */
  logprobs?: TokenLogprobs;
  /**
   * First chunk of a choice, when prompt logprobs were asked for: one entry per prompt
   * token (the first has no logprob: NaN).
   */
  promptLogprobs?: TokenLogprobs;
}

/** OpenAI-style finish reasons; engines may add their own strings. */
export type FinishReason = 'stop' | 'length' | 'abort' | (string & {});

/** End of one choice. */
export interface GenerateDone {
  finishReason: FinishReason;
  /** Set when a stop token id (or EOS) ended the choice. */
  matchedTokenId?: number;
  /** Set when the engine itself matched a stop string. */
  matchedStopStr?: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  index: number;
  /**
   * Non-stream mode: every generated token. Stream mode: empty, the tokens
   * were delivered by the chunks.
   */
  outputIds: number[];
  /** Non-stream mode with logprobs asked for: one entry per id in outputIds. */
  logprobs?: TokenLogprobs;
}

export type EngineEvent =
  | { kind: 'chunk'; chunk: TokenChunk }
  | { kind: 'done'; done: GenerateDone };

export interface EngineModelInfo {
  modelPath: string;
  servedModelName: string;
  tokenizerPath: string;
  isGeneration: boolean;
  maxContextLength: number;
  maxReqInputLen: number;
  vocabSize: number;
  eosTokenIds: number[];
  bosTokenId: number;
  padTokenId: number;
  modelType: string;
  architectures: string[];
  supportsVision: boolean;
  /** JSON object text of the engine's sampling defaults ('' = none). */
  defaultSamplingParamsJson: string;
  /** SGLang only: JSON of its --preferred-sampling-params ('' or absent = none). */
  preferredSamplingParams?: string;
}

export interface EngineServerInfo {
  engineVersion: string;
  activeRequests: number;
  isPaused: boolean;
  uptimeSeconds: number;
  maxTotalNumTokens: number;
  /** Engine configuration, free-form. */
  serverArgs: Record<string, unknown>;
}

export interface EngineLoads {
  /** Summed over data-parallel ranks. */
  runningRequests: number;
  waitingRequests: number;
  /** Mean KV-cache use in [0, 1]. */
  tokenUsage: number;
  /** Tokens/s. */
  genThroughput: number;
  perRank: Array<{
    dpRank: number;
    runningRequests: number;
    waitingRequests: number;
    usedTokens: number;
    maxTotalTokens: number;
    tokenUsage: number;
    maxRunningRequests: number;
    /** Prompt tokens of waiting requests not served from cache (0 when the engine does not say). */
    waitingUncachedTokens: number;
  }>;
}

/**
 * What a generation needs of its caller's cancellation: whether it happened, its reason,
 * and a way to hear of it. An AbortSignal is one; the HTTP layer passes a lighter one per
 * request (src/http/request-cancellation.ts) instead of an AbortController.
 */
export interface Cancellation {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface EngineClient {
  /** Worker address as given, e.g. grpc://10.0.0.5:30000. */
  readonly url: string;
  /**
   * Start a generation. Events arrive in engine order; every choice ends
   * with exactly one `done`. When `signal` fires the stream is cancelled,
   * the worker is told to abort, and iteration throws
   * EngineError('aborted'). Transport failures throw EngineError too.
   */
  generate(p: GenerateParams, signal: Cancellation): AsyncIterable<EngineEvent>;
  /** Ask the worker to drop a request (best effort, never throws for "unknown id"). */
  abort(requestId: string): Promise<void>;
  /** true when the worker answers and reports itself healthy; never throws. */
  health(): Promise<boolean>;
  modelInfo(): Promise<EngineModelInfo>;
  serverInfo(): Promise<EngineServerInfo>;
  loads(): Promise<EngineLoads>;
  /**
   * Pool one tokenized input into an embedding vector (the Embed rpc). Failures
   * throw EngineError; `signal` cancels the call.
   */
  embed(p: EmbedParams, signal: AbortSignal): Promise<EmbedResult>;
  /**
   * LoRA adapters (SGLang's LoadLoRAAdapter / UnloadLoRAAdapter / ListLoadedLoRAAdapters).
   * An engine's refusal throws EngineError('invalid_argument') with its message; a protocol
   * without these rpcs (vLLM's) throws EngineError('unimplemented').
   */
  loadAdapter(a: AdapterRef): Promise<void>;
  unloadAdapter(a: Pick<AdapterRef, 'id' | 'name'>): Promise<void>;
  listAdapters(): Promise<AdapterRef[]>;
  /** Drop the connection; in-flight streams fail with EngineError. */
  close(): void;
}

/** A LoRA adapter as an engine knows it. */
export interface AdapterRef {
  /** GenerateRequest.lora_id. */
  id: string;
  name: string;
  /** The folder the engine loads it from. */
  path: string;
}

/** One embedding request, already tokenized. */
export interface EmbedParams {
  requestId: string;
  inputIds: Uint32Array;
  /** Pin to one data-parallel rank (SGLang's Embed carries it; vLLM's does not). */
  dataParallelRank?: number;
}

export interface EmbedResult {
  /** As the engine pooled it (normally L2-normalised); its length is the dimension. */
  embedding: Float32Array;
  promptTokens: number;
}
