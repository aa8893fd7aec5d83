// The contract between Portico and a custom chat processor (spec 002), as TypeScript types.
// Authors import these from the package's main entry point (src/public-api.ts):
//
//   provider(config, options) => factory                      once per server thread, at startup
//   factory(instanceId, modelCard, routedEngine) => engine    per model: first worker, card change
//   engine.generate(request, context)                          async generator of chat chunks
//
// `request` is the OpenAI chat completion request as the client sent it (for /v1/responses
// and /v1/messages: the chat request Portico made of it); the chunks are OpenAI
// `chat.completion.chunk` objects, which Portico writes out as they are (chat, streaming),
// gathers into one `chat.completion` (chat, not streaming) or turns into the Responses and
// Anthropic shapes.

/**
 * The provider's first argument: the frontend's configuration, every `portico serve`
 * option as it resolved (flag, PORTICO_* environment, --config file, default), keyed by
 * flag name as the config file is (`'http-port'`, `'host'`, `'router-mode'`, `'model-name'`,
 * …). Secrets are left out: the API keys are absent and credentials in URLs are cut out.
 * `chat-processor-config` is absent too: it is the second argument. Read-only.
 */
export interface FrontendConfig {
  /** The --chat-processor value (a registered name or `path/to/module.mjs:export`). */
  readonly 'chat-processor': string;
  readonly [option: string]: unknown;
}

/** The provider's second argument: the --chat-processor-config JSON object ({} when unset). */
export type ProcessorOptions = Record<string, unknown>;

/**
 * `provider(config, options)`, as spec 002 calls it: the frontend's configuration, then the
 * processor's own --chat-processor-config object. Per-model facts (the served name, its
 * tokenizer and folder, the worker's runtime config) come to the factory in its card.
 */
export type ChatProcessorProvider = (config: FrontendConfig, options: ProcessorOptions) => ChatEngineFactory | Promise<ChatEngineFactory>;

/** Called for each model when its first worker registers and again when its card changes. */
export type ChatEngineFactory = (instanceId: number, modelCard: ModelCard, routedEngine: RoutedEngine) => ChatEngine | Promise<ChatEngine>;

export interface ChatEngine {
  /** Serves one chat request: yields OpenAI chat completion chunks. */
  generate(request: ChatCompletionRequest, context: RequestContext): AsyncIterable<ChatCompletionChunk>;
}

/** What the worker published when it registered (its GetModelInfo answer). */
export interface RuntimeConfig {
  modelPath: string;
  servedModelName: string;
  maxContextLength: number;
  maxReqInputLen: number;
  vocabSize: number;
  eosTokenIds: number[];
  bosTokenId: number;
  padTokenId: number;
  modelType: string;
  architectures: string[];
  /** The engine's sampling defaults (parsed), or {}. */
  defaultSamplingParams: Record<string, unknown>;
  /** Everything else the worker reported, free-form. */
  runtimeData: Record<string, unknown>;
}

/** The model's card: Portico's equivalent of Dynamo's model deployment card. */
export interface ModelCard {
  /** The name clients send as `model`. */
  readonly name: string;
  /** The worker's runtime config, as published when it registered. */
  runtimeConfig(): RuntimeConfig;
  /** The model's local folder (tokenizer.json, tokenizer_config.json, config.json...). */
  localDir(): string;
  /** The context window in tokens, when known (config.json's, else the engine's). */
  readonly contextLength: number | null;
  /** Portico's own native tokenizer and template for this model (optional to use). */
  readonly tokenizer: ModelTokenizer;
}

/** The model's native tokenizer and chat template, as Portico uses them. */
export interface ModelTokenizer {
  encode(text: string, addSpecialTokens?: boolean): number[];
  decode(ids: readonly number[], skipSpecialTokens?: boolean): string;
  /** Renders the model's chat template (or --chat-template) over messages (and tools) and tokenizes the prompt. */
  applyChatTemplate(messages: unknown[], opts?: { tools?: unknown[] | null; addGenerationPrompt?: boolean; kwargs?: Record<string, unknown> | null }): number[];
  /** An incremental detokenizer: push ids as they arrive, get the text that became final. */
  detokenizer(skipSpecialTokens?: boolean): { push(ids: readonly number[]): string; finish(): string };
  readonly eosTokenIds: readonly number[];
}

/** A tokenized request for a worker, sent through Portico's router, queues and cancellation. */
export interface PreprocessedRequest {
  tokenIds: readonly number[] | Uint32Array;
  /** Output token limit (unset: the engine's default). */
  maxTokens?: number;
  minTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  seed?: number | bigint;
  frequencyPenalty?: number;
  presencePenalty?: number;
  repetitionPenalty?: number;
  stopTokenIds?: number[];
  ignoreEos?: boolean;
  /** Parallel choices (outputs carry their index). Default 1. */
  n?: number;
}

/** One engine output: new token ids of one choice, and its finish reason at its end. */
export interface EngineOutput {
  index: number;
  tokenIds: number[];
  /** Set on the choice's last output: 'stop', 'length', 'abort' or the engine's own. */
  finishReason: string | null;
  /** The stop token (or EOS) that ended the choice, if one did. */
  matchedTokenId?: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export interface RoutedEngine {
  /**
   * Routes the request to a worker (KV-aware, queued, cancelled with the client) and
   * streams its outputs. Failures surface while iterating: InvalidArgument for a request
   * the worker rejected, RoutedEngineError (with the status the client would get) for any
   * other classified failure.
   */
  generate(request: PreprocessedRequest, context: RequestContext): AsyncIterable<EngineOutput>;
}

export interface RequestContext {
  /** The request id (x-request-id or generated), as logged and returned. */
  readonly id: string;
  /** Aborts when the client goes away (or the request times out). */
  readonly signal: AbortSignal;
  /** Which endpoint the request came in on. */
  readonly endpoint: '/v1/chat/completions' | '/v1/responses' | '/v1/messages';
  /** A request header (lower-case name), or '' when absent. */
  header(name: string): string;
  /**
   * Sets an HTTP response header, errors included, while the response is not committed
   * (before the first yield or the raise). Returns false and sets nothing when it cannot
   * be carried: a streaming request without a pre-commit peek, a call after a stream
   * started, any /v1/responses or /v1/messages request. Throws (TypeError) for an invalid
   * name or value and for a header Portico owns.
   */
  setResponseHeader(name: string, value: string): boolean;
}

/** The OpenAI chat completion request (loosely typed: processors read what they need). */
export interface ChatCompletionRequest {
  model: string;
  messages: Array<Record<string, unknown>>;
  stream?: boolean;
  tools?: unknown[];
  tool_choice?: unknown;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  [field: string]: unknown;
}

export interface ChatCompletionChunkDelta {
  role?: 'assistant';
  content?: string | null;
  reasoning_content?: string | null;
  tool_calls?: Array<{ index: number; id?: string; type?: 'function'; function?: { name?: string; arguments?: string } }>;
}

export interface ChatCompletionChunk {
  id?: string;
  object?: 'chat.completion.chunk';
  created?: number;
  model?: string;
  choices: Array<{ index: number; delta: ChatCompletionChunkDelta; finish_reason?: string | null; logprobs?: unknown }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | null;
  [field: string]: unknown;
}
