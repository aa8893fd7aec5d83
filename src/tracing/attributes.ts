// The span and attribute names Portico's traces use. Request attributes follow the
// OpenTelemetry GenAI semantic conventions (gen_ai.*); the latency ones are vLLM's
// (gen_ai.latency.*, as its llm_request span has them), so a frontend span and an engine
// span of one request read alike; Portico's own facts (worker, KV overlap, migration) are
// portico.*.

export const ATTR = {
  httpMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpStatus: 'http.response.status_code',
  errorType: 'error.type',
  serverAddress: 'server.address',
  operation: 'gen_ai.operation.name',
  requestModel: 'gen_ai.request.model',
  /** The request id the client sees (x-request-id); vLLM's attribute for its request id. */
  requestId: 'gen_ai.request.id',
  maxTokens: 'gen_ai.request.max_tokens',
  temperature: 'gen_ai.request.temperature',
  topP: 'gen_ai.request.top_p',
  choiceCount: 'gen_ai.request.choice.count',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cachedTokens: 'gen_ai.usage.cache_read.input_tokens',
  /** Seconds. */
  timeToFirstToken: 'gen_ai.latency.time_to_first_token',
  timeInQueue: 'gen_ai.latency.time_in_queue',
  e2e: 'gen_ai.latency.e2e',
  stream: 'portico.stream',
  engineRequestId: 'portico.engine_request_id',
  worker: 'portico.worker',
  workerId: 'portico.worker.id',
  dpRank: 'portico.dp_rank',
  kvOverlapBlocks: 'portico.kv.overlap_blocks',
  promptTokens: 'portico.prompt_tokens',
  queued: 'portico.route.queued',
  prefillWorker: 'portico.prefill.worker',
  prefillDpRank: 'portico.prefill.dp_rank',
  migrations: 'portico.migrations',
  cancelled: 'portico.cancelled',
} as const;

/** gen_ai.operation.name of each generation route (the routes a trace is started for). */
export function operationOf(route: string): string {
  // KServe's ModelInfer / ModelStreamInfer: a prompt in, generated text out.
  if (route === '/v1/completions' || route.startsWith('/inference.GRPCInferenceService/')) return 'text_completion';
  if (route === '/v1/embeddings') return 'embeddings';
  return 'chat';
}
