// Portico's frontend metrics, following the names of Dynamo's frontend set under a
// configurable prefix (default portico_frontend_).

import { Counter, Gauge, Histogram, ObservedCounter, Registry } from './registry.js';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const ITL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 1];
const TOKEN_BUCKETS = [1, 16, 64, 256, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144];
const TOKENIZER_BUCKETS = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];

export class FrontendMetrics {
  readonly registry = new Registry();
  readonly requests: Counter;
  readonly inflight: Gauge;
  readonly queued: Gauge;
  readonly prefillQueued: Gauge;
  readonly migrations: Counter;
  readonly migrationsExhausted: Counter;
  readonly migrationSeqLenExceeded: Counter;
  readonly disaggFallback: Counter;
  readonly images: Counter;
  /** Ended spans by outcome (exported, failed, dropped), with tracing on. */
  readonly traceSpans: Counter;
  readonly workerRole: Gauge;
  readonly disconnected: Gauge;
  readonly outputTokensTotal: Counter;
  readonly ignoredHeaders: Counter;
  readonly duration: Histogram;
  readonly ttft: Histogram;
  readonly itl: Histogram;
  readonly inputTokens: Histogram;
  readonly outputTokens: Histogram;
  readonly cachedTokens: Histogram;
  readonly tokenizer: Histogram;
  readonly workerInflight: Gauge;
  readonly workerHealthy: Gauge;
  readonly workerKvBlocks: Gauge;
  readonly kvEventBatches: ObservedCounter;
  readonly kvEventGaps: ObservedCounter;
  readonly kvEventsUnapplied: ObservedCounter;
  readonly workerKvBlockSize: Gauge;
  readonly modelContextLength: Gauge;
  readonly modelTotalKvBlocks: Gauge;
  readonly modelKvCacheBlockSize: Gauge;
  readonly modelMaxNumSeqs: Gauge;
  readonly modelMaxNumBatchedTokens: Gauge;
  readonly workerActiveDecodeBlocks: Gauge;
  readonly workerActivePrefillTokens: Gauge;
  readonly backpressurePauses: Counter;
  readonly streamBuffered: Gauge;
  readonly stalledDrops: Counter;
  readonly residentMemory: Gauge;
  readonly heapUsed: Gauge;
  readonly loopLag: Gauge;
  readonly loopUtilization: Gauge;
  readonly discoveryConnected: Gauge;
  readonly discoveryReconnects: ObservedCounter;
  readonly discoveryWorkers: Gauge;
  readonly discoveryIgnored: ObservedCounter;
  /** Requests answered by each shard (only when serving with --shards above 1). */
  readonly shardRequests: Counter | null;

  constructor(prefix = 'portico_frontend_', shard?: number) {
    const r = this.registry;
    checkMetricsPrefix(prefix);
    // Dynamo's labels: status success|error, error_type (see errorType); /metrics and probes are not counted
    this.requests = r.add(new Counter(`${prefix}requests_total`, 'Requests answered, by model, endpoint, request type, outcome (success or error) and error type.', ['model', 'endpoint', 'request_type', 'status', 'error_type']));
    this.inflight = r.add(new Gauge(`${prefix}inflight_requests`, 'Generation requests being served.', ['model']));
    this.queued = r.add(new Gauge(`${prefix}queued_requests`, 'Requests waiting in the router queue.', ['model']));
    this.migrations = r.add(new Counter(`${prefix}model_migration_total`, 'Requests moved to another worker after their worker failed or left (migration_type: new_request before any output, ongoing_request after; reason: what the failure said of the worker).', ['model', 'migration_type', 'reason']));
    this.migrationsExhausted = r.add(new Counter(`${prefix}model_migration_exhausted_total`, 'Requests that failed on a worker fault with no migration left (--migration-limit reached, or no other worker).', ['model']));
    this.migrationSeqLenExceeded = r.add(new Counter(`${prefix}model_migration_max_seq_len_exceeded_total`, 'Requests whose generated ids stopped being kept for migration past --migration-max-seq-len.', ['model']));
    this.prefillQueued = r.add(new Gauge(`${prefix}prefill_queued_requests`, 'Requests waiting in the prefill pool\'s router queue (disaggregated serving).', ['model']));
    this.disaggFallback = r.add(new Counter(`${prefix}disagg_decode_only_total`, 'Requests a decode worker served without a prefill leg: no healthy prefill worker (vLLM decode workers compute the prompt themselves; see --disagg-enforce).', ['model']));
    this.images = r.add(new Counter(`${prefix}images_total`, 'Images of requests by where their tensors came from: processed (fetched or decoded, then preprocessed) or cached (the same content, already processed for the model: --mm-processor-cache-gb).', ['model', 'source']));
    this.traceSpans = r.add(new Counter(`${prefix}trace_spans_total`, 'Ended trace spans by outcome: exported (the collector took them), failed (the export failed: collector down or refusing), dropped (the export queue was full, OTEL_BSP_MAX_QUEUE_SIZE).', ['outcome']));
    this.workerRole = r.add(new Gauge(`${prefix}worker_role`, 'Each worker\'s role (1 on its role\'s series): aggregated, prefill or decode.', ['model', 'worker', 'role'], 'max'));
    // a gauge in Dynamo (same name, same type)
    this.disconnected = r.add(new Gauge(`${prefix}disconnected_clients`, 'Clients that went away before their response ended.', ['model']));
    this.outputTokensTotal = r.add(new Counter(`${prefix}output_tokens_total`, 'Generated tokens, all requests together.', ['model']));
    this.ignoredHeaders = r.add(new Counter(`${prefix}ignored_routing_headers_total`, 'Prefill routing headers ignored because this deployment has no prefill workers.', ['header']));
    this.duration = r.add(new Histogram(`${prefix}request_duration_seconds`, 'Time from request arrival to the end of its response.', ['model'], LATENCY_BUCKETS));
    this.ttft = r.add(new Histogram(`${prefix}time_to_first_token_seconds`, 'Time from request arrival to the first generated token.', ['model'], LATENCY_BUCKETS));
    this.itl = r.add(new Histogram(`${prefix}inter_token_latency_seconds`, 'Time between generated tokens (per token, averaged over each engine message).', ['model'], ITL_BUCKETS));
    this.inputTokens = r.add(new Histogram(`${prefix}input_sequence_tokens`, 'Prompt length in tokens.', ['model'], TOKEN_BUCKETS));
    this.outputTokens = r.add(new Histogram(`${prefix}output_sequence_tokens`, 'Generated tokens per request.', ['model'], TOKEN_BUCKETS));
    this.cachedTokens = r.add(new Histogram(`${prefix}cached_tokens`, 'Prompt tokens served from the engine prefix cache, per request.', ['model'], TOKEN_BUCKETS));
    this.tokenizer = r.add(new Histogram(`${prefix}tokenizer_latency_seconds`, 'Time to render the chat template and tokenize one prompt.', ['model'], TOKENIZER_BUCKETS));
    this.workerInflight = r.add(new Gauge(`${prefix}worker_active_requests`, 'Requests in flight per worker (with --event-plane replica sync: every replica\'s).', ['model', 'worker']));
    this.backpressurePauses = r.add(new Counter(`${prefix}stream_backpressure_pauses_total`, 'Times a slow reader made a stream pause its engine output until the socket drained.', ['model']));
    this.streamBuffered = r.add(new Gauge(`${prefix}stream_buffered_bytes`, 'Bytes of streamed responses held by the HTTP layer because the socket would not take them (at most one event per paused stream).', ['model']));
    this.stalledDrops = r.add(new Counter(`${prefix}stalled_streams_dropped_total`, 'Streams given up because the client read nothing for the stall limit (--stream-stall-timeout-secs).', ['model']));
    this.residentMemory = r.add(new Gauge('process_resident_memory_bytes', 'Resident memory of the server process.', [], 'max'));
    this.heapUsed = r.add(new Gauge('nodejs_heap_used_bytes', 'V8 heap in use (all shards together).', []));
    this.loopLag = r.add(new Gauge('nodejs_eventloop_lag_seconds', 'How late the event loop ran a callback queued at the previous scrape (the worst shard).', [], 'max'));
    this.loopUtilization = r.add(new Gauge('nodejs_eventloop_utilization', 'Share of wall time the event loop spent running callbacks since the previous scrape (the busiest shard).', [], 'max'));
    this.workerHealthy = r.add(new Gauge(`${prefix}worker_healthy`, '1 when the worker answers its health check.', ['model', 'worker'], 'max'));
    // --discovery (read at scrape time from the shared status; every shard sees the same values).
    this.discoveryConnected = r.add(new Gauge(`${prefix}discovery_connected`, '1 while the etcd watch is connected (--discovery); the last known workers keep serving while 0.', [], 'max'));
    this.discoveryReconnects = r.add(new ObservedCounter(`${prefix}discovery_reconnects_total`, 'Times the etcd watch came back after etcd was lost.', []));
    this.discoveryWorkers = r.add(new Gauge(`${prefix}discovery_workers`, 'Worker registrations known from etcd (every model).', [], 'max'));
    this.discoveryIgnored = r.add(new ObservedCounter(`${prefix}discovery_ignored_registrations_total`, 'Registrations of a model this frontend does not serve, or with a bad record or URL (logged and skipped).', []));
    this.workerKvBlocks = r.add(new Gauge(`${prefix}worker_kv_blocks`, 'KV blocks the router knows each worker holds, from its KV events (kv mode).', ['model', 'worker'], 'max'));
    // Read at scrape time from each worker's KV event source (a shard reads its own copy of the feed: max, not sum).
    this.kvEventBatches = r.add(new ObservedCounter(`${prefix}kv_event_batches_applied_total`, 'KV event batches applied to the router index per worker since the frontend started, replays after a resubscribe included (kv mode with KV events).', ['model', 'worker']));
    this.kvEventGaps = r.add(new ObservedCounter(`${prefix}kv_event_sequence_gaps_total`, 'Gaps in a worker\'s KV event sequence numbers (each one reset that worker\'s index).', ['model', 'worker']));
    this.kvEventsUnapplied = r.add(new ObservedCounter(`${prefix}kv_events_unapplied_total`, 'Stored-block KV events the router could not index, per worker and reason: orphan (parent never stored), block_size (blocks not of the worker\'s block size), dp_rank (rank past the indexed ones), lora_unnamed (adapter named only by number).', ['model', 'worker', 'reason']));
    this.workerKvBlockSize = r.add(new Gauge(`${prefix}worker_kv_block_size`, 'Tokens per KV block the router hashes a worker\'s prompts in: its KV events\' block size, else its engine\'s declared one, else --router-block-size (kv mode).', ['model', 'worker'], 'max'));
    // Dynamo's model-configuration gauges (its model card's runtime config): read at scrape time
    // from the model's facts and the workers' server info; one value per model (see api/metrics.ts).
    this.modelContextLength = r.add(new Gauge(`${prefix}model_context_length`, 'Context length of the served model (the engine\'s, else config.json\'s).', ['model'], 'max'));
    this.modelTotalKvBlocks = r.add(new Gauge(`${prefix}model_total_kv_blocks`, 'KV blocks one worker of the model holds (the largest reported; its max_total_num_tokens over its block size).', ['model'], 'max'));
    this.modelKvCacheBlockSize = r.add(new Gauge(`${prefix}model_kv_cache_block_size`, 'Tokens per KV cache block (the largest a worker of the model uses: its KV events\' or engine\'s, else --router-block-size).', ['model'], 'max'));
    this.modelMaxNumSeqs = r.add(new Gauge(`${prefix}model_max_num_seqs`, 'Running sequences one worker admits (max_num_seqs / max_running_requests), as the engine declares it.', ['model'], 'max'));
    this.modelMaxNumBatchedTokens = r.add(new Gauge(`${prefix}model_max_num_batched_tokens`, 'Token budget of one engine batch, as the engine declares it.', ['model'], 'max'));
    // Dynamo's per-worker load gauges and labels, from the router's load table (shared by every
    // shard, so shards report the same value: merged by max).
    const workerLabels = ['model', 'worker_id', 'dp_rank', 'worker_type'];
    this.workerActiveDecodeBlocks = r.add(new Gauge(`${prefix}worker_active_decode_blocks`, 'KV blocks the router counts as held by requests in flight per worker (prompt blocks not already cached there, plus output blocks when tracked).', workerLabels, 'max'));
    this.workerActivePrefillTokens = r.add(new Gauge(`${prefix}worker_active_prefill_tokens`, 'Uncached prompt tokens dispatched to each worker and not yet past their first output token.', workerLabels, 'max'));
    this.shardRequests = shard === undefined ? null : r.add(new Counter(`${prefix}shard_requests_total`, 'Requests answered by each server shard (--shards above 1).', ['shard']));
  }
}

/** A metric name prefix must itself be a valid start of a Prometheus metric name. */
export function checkMetricsPrefix(prefix: string): void {
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(prefix)) {
    throw new Error(`--metrics-prefix must match [a-zA-Z_:][a-zA-Z0-9_:]* (a Prometheus metric name start), got ${JSON.stringify(prefix)}`);
  }
}

/** Count one answered request (HTTP or gRPC) under Dynamo's status/error_type labels, from its HTTP status. */
export function countRequest(m: FrontendMetrics, model: string, endpoint: string, requestType: 'stream' | 'unary', status: number): void {
  const type = errorType(status);
  m.requests.labels(model, endpoint, requestType, type === '' ? 'success' : 'error', type).inc();
}

/** Dynamo's `error_type` of a finished request: '' on success, else a class of its status. */
export function errorType(status: number): string {
  if (status < 400) return '';
  if (status === 499) return 'cancelled';
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 404) return 'not_found';
  if (status === 429 || status === 503 || status === 529) return 'overloaded';
  if (status === 501) return 'not_implemented';
  if (status === 504) return 'timeout';
  if (status < 500) return 'validation';
  return 'internal';
}

/** The per-model metric children, resolved once at startup so requests do no lookups. */
export interface ModelStats {
  inflight: ReturnType<Gauge['labels']>;
  disconnected: ReturnType<Gauge['labels']>;
  outputTokensTotal: ReturnType<Counter['labels']>;
  duration: ReturnType<Histogram['labels']>;
  ttft: ReturnType<Histogram['labels']>;
  itl: ReturnType<Histogram['labels']>;
  inputTokens: ReturnType<Histogram['labels']>;
  outputTokens: ReturnType<Histogram['labels']>;
  cachedTokens: ReturnType<Histogram['labels']>;
  tokenizer: ReturnType<Histogram['labels']>;
  backpressurePauses: ReturnType<Counter['labels']>;
  streamBuffered: ReturnType<Gauge['labels']>;
  stalledDrops: ReturnType<Counter['labels']>;
  /** Migrations: labels(migration_type, reason). */
  migrations: { labels(type: 'new_request' | 'ongoing_request', reason: string): ReturnType<Counter['labels']> };
  migrationsExhausted: ReturnType<Counter['labels']>;
  migrationSeqLenExceeded: ReturnType<Counter['labels']>;
}

export function modelStats(m: FrontendMetrics, model: string): ModelStats {
  m.queued.labels(model).set(0);
  m.prefillQueued.labels(model).set(0);
  return {
    inflight: m.inflight.labels(model),
    disconnected: m.disconnected.labels(model),
    outputTokensTotal: m.outputTokensTotal.labels(model),
    duration: m.duration.labels(model),
    ttft: m.ttft.labels(model),
    itl: m.itl.labels(model),
    inputTokens: m.inputTokens.labels(model),
    outputTokens: m.outputTokens.labels(model),
    cachedTokens: m.cachedTokens.labels(model),
    tokenizer: m.tokenizer.labels(model),
    backpressurePauses: m.backpressurePauses.labels(model),
    streamBuffered: m.streamBuffered.labels(model),
    stalledDrops: m.stalledDrops.labels(model),
    migrations: { labels: (type, reason) => m.migrations.labels(model, type, reason) },
    migrationsExhausted: m.migrationsExhausted.labels(model),
    migrationSeqLenExceeded: m.migrationSeqLenExceeded.labels(model),
  };
}
