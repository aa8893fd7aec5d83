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
  /**
   * W3C trace context for the engine (traceparent, tracestate), as gRPC metadata: flat
   * name, value pairs sent with Generate. Undefined: none (tracing off).
   */
  traceHeaders?: readonly string[];
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
   * Disaggregated serving, SGLang's protocol (GenerateRequest.disaggregated_params): the
   * prefill worker's bootstrap server and the request's room. Both legs carry the same
   * values; the decode worker fetches the prompt's KV from the prefill worker by room.
   */
  bootstrap?: PdBootstrap;
  /**
   * Disaggregated serving, vLLM's protocol (GenerateRequest.kv_transfer_params_json): the
   * KV connector's transfer parameters, a JSON object's text. On the prefill leg it asks
   * for a remote decode; on the decode leg it is what the prefill leg returned (or what the
   * router synthesized for the connector).
   */
  kvTransferParams?: string;
  /** Preprocessed images (GenerateRequest.mm_inputs on both protocols). */
  multimodal?: EngineMultimodal;
  /**
   * true: the engine sends token chunks as they are produced.
   * false: the engine sends one `done` per choice carrying all `outputIds`.
   */
  stream: boolean;
}

/** A little-endian tensor as both engine protocols carry it (TensorData). */
export interface EngineTensor {
  data: Uint8Array;
  shape: number[];
  dtype: 'float32' | 'int64';
}

/**
 * The preprocessed images of one request, one modality (MultimodalInputs on both
 * protocols). Images are in prompt order: placeholder i, hash i and row i of each
 * batched tensor belong to the same image.
 */
export interface EngineMultimodal {
  /**
   * The encoder input of every image, concatenated along dim 0 (float32). Null on the decode
   * leg of a vLLM KV hand-off: the prompt's KV, images included, comes from the prefill
   * worker, so only the grids (M-RoPE positions), ranges and hashes go (the grid-only form
   * vLLM's servicer takes there).
   */
  pixelValues: EngineTensor | null;
  /** Model-specific tensors, written in this order (image_grid_thw, patches_per_image, image_sizes). */
  modelTensors: [string, EngineTensor][];
  /** The token id each image position carries in inputIds. */
  imTokenId: number;
  /** Per image: where its placeholder tokens sit in inputIds. */
  placeholders: { offset: number; length: number }[];
  /** Per image: content hash (identical files hash the same). */
  hashes: string[];
  /** vLLM field layout: tensors with one row per image. */
  batchedKeys: string[];
  /** vLLM field layout: tensor → the batched tensor whose values size its per-image slices. */
  flatKeys: [string, string][];
  /** vLLM: tensors the engine keeps on the CPU. */
  keepOnCpuKeys: string[];
}

/** SGLang's DisaggregatedParams: where the decode worker meets the prefill worker's KV. */
export interface PdBootstrap {
  host: string;
  port: number;
  /** Fresh per request, in [0, 2^31). */
  room: number;
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
  /**
   * vLLM's protocol: the KV connector's parameters a prefill leg returns for its decode leg
   * (GenerateComplete.kv_transfer_params_json; the legacy typed field as
   * {"remote_host","remote_port"} when only it is set). Absent otherwise.
   */
  kvTransferParams?: string;
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
  /** What the engine says of its part in disaggregated serving. */
  disaggregation: EngineDisaggregation;
}

/**
 * A worker's role as its engine declares it: SGLang's server_args.disaggregation_mode
 * ("prefill" / "decode"), vLLM's kv_role (kv_producer: prefill, kv_consumer: decode;
 * kv_both says nothing). null: the engine does not say (the configured role stands).
 */
export interface EngineDisaggregation {
  role: 'prefill' | 'decode' | null;
  /** SGLang prefill: its bootstrap server's port (server_args.disaggregation_bootstrap_port). */
  bootstrapPort?: number;
  /** vLLM: the KV connector (GetServerInfo kv_connector, e.g. NixlConnector), '' if none. */
  kvConnector?: string;
  /** vLLM: the connector's engine id (kv_engine_id), '' if none. */
  kvEngineId?: string;
  /** vLLM: data-parallel ranks (a DP engine's connector id carries its rank). */
  dataParallelSize?: number;
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
  /** FlushCache rpc (both protocols): drop the prefix cache. Transport failures throw EngineError. */
  flushCache?(): Promise<EngineAdminResult>;
  /** StartProfile / StopProfile rpcs (both protocols). */
  startProfile?(): Promise<EngineAdminResult>;
  stopProfile?(): Promise<EngineAdminResult>;
}

/** What an engine's admin rpc answered. */
export interface EngineAdminResult {
  success: boolean;
  message: string;
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
