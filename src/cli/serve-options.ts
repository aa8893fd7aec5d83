// The options of `portico serve`, as one table (see options.ts).

import type { OptionSpec } from './options.js';

export const SERVE_OPTIONS: readonly OptionSpec[] = [
  { name: 'model-path', kind: 'string', group: 'Model', meta: 'DIR', required: true, help: 'A local Hugging Face layout folder: tokenizer.json and tokenizer_config.json (chat template), and config.json / generation_config.json when present.' },
  { name: 'model-name', kind: 'string', group: 'Model', meta: 'NAME', help: 'The name clients send as "model". Default: the folder\'s name.' },
  { name: 'worker', kind: 'list', group: 'Workers (at least one of --worker or --mock)', meta: 'URL', help: 'An engine worker: grpc://HOST:PORT (SGLang scheduler protocol) or vllm+grpc://HOST:PORT (vLLM engine protocol). Repeat the flag, or give a comma-separated list.' },
  { name: 'mock', kind: 'string', group: 'Workers (at least one of --worker or --mock)', meta: 'echo|sim', choices: ['echo', 'sim'], help: "Start in-process mock engines reached over real gRPC on loopback: 'echo' streams the prompt's tokens back, 'sim' simulates an engine (scheduler, KV cache, timing)." },
  { name: 'mock-workers', kind: 'int', group: 'Workers (at least one of --worker or --mock)', min: 1, default: 2, help: 'How many mock engines to start with --mock.' },
  { name: 'discovery', kind: 'string', group: 'Workers (at least one of --worker or --mock)', meta: 'etcd://HOST:PORT[,HOST:PORT]', help: "Watch etcd for workers: each registered worker of this model (portico mock-engine --register, portico register) joins once its health check passes and leaves when its lease ends. etcd unreachable at start is an error; lost later, the last known workers keep serving while the watch reconnects (see /health, /metrics discovery_*)." },
  { name: 'namespace', kind: 'string', group: 'Workers (at least one of --worker or --mock)', meta: 'NS', default: 'portico', help: 'The deployment\'s namespace: etcd key prefix NS/workers/ and NATS subject prefix NS.' },
  { name: 'event-plane', kind: 'string', group: 'Workers (at least one of --worker or --mock)', meta: 'nats://HOST:PORT[,HOST:PORT]', help: "NATS (JetStream on) as the event plane: in kv mode every worker's KV events are read from NATS (published by engines started with --event-plane) instead of its gRPC stream, and frontend replicas of the model share their load and routing decisions (replica sync). NATS unreachable at start is an error; lost later, it reconnects." },
  { name: 'no-replica-sync', kind: 'bool', group: 'Workers (at least one of --worker or --mock)', help: 'With --event-plane: do not share load and routing decisions with other replicas (KV events still come from NATS).' },
  { name: 'replica-sync-expiry-secs', kind: 'number', group: 'Workers (at least one of --worker or --mock)', default: 3, min: 0, exclusiveMin: true, help: 'A replica not heard from for this long (it died, or NATS is away) has its load dropped from this one\'s view.' },
  { name: 'router-mode', kind: 'string', group: 'Routing', choices: ['round-robin', 'random', 'least-loaded', 'power-of-two', 'kv', 'direct'], default: 'round-robin', help: "How a worker is chosen: 'kv' weighs each worker's cached prefix (from its KV events) against its load; 'direct' only serves requests that name a worker (nvext.backend_instance_id or x-dynamo-worker-instance-id)." },
  { name: 'router-block-size', kind: 'int', group: 'Routing', min: 1, default: 16, help: 'KV block size in tokens, as the engines use it (kv mode hashes the prompt in blocks of this size).' },
  { name: 'router-temperature', kind: 'number', group: 'Routing', default: 0, help: 'kv mode: 0 picks the lowest cost; above 0 samples workers by softmax over their costs.' },
  { name: 'router-prefill-weight', kind: 'number', group: 'Routing', default: 1, help: 'kv mode: weight of the blocks still to prefill against decode blocks in the cost.' },
  { name: 'router-no-kv-events', kind: 'bool', group: 'Routing', help: 'kv mode: do not subscribe to workers\' KV events; predict each worker\'s cache from the requests sent to it (see --router-ttl-secs).' },
  { name: 'router-ttl-secs', kind: 'number', group: 'Routing', default: 120, help: 'Lifetime of predicted cache blocks (workers without KV events, salted requests).' },
  { name: 'router-track-output-blocks', kind: 'bool', group: 'Routing', help: 'Count output blocks as they are generated, reserving up to agent_hints.osl when given.' },
  { name: 'router-session-affinity-ttl-secs', kind: 'number', group: 'Routing', default: 0, help: 'Pin each X-Dynamo-Session-ID to the worker that served it for this long after its last request (0: off).' },
  { name: 'router-queue-threshold', kind: 'number', group: 'Routing queue', help: 'Queue requests while every worker has active prefill tokens past this fraction of --router-max-num-batched-tokens (unset: no queue unless a busy threshold is set).' },
  { name: 'router-max-num-batched-tokens', kind: 'int', group: 'Routing queue', min: 1, default: 8192, help: "The engines' per-step token budget, the base of --router-queue-threshold." },
  { name: 'active-decode-blocks-threshold', kind: 'number', group: 'Routing queue', help: 'A worker is busy past this fraction of its KV blocks held by active requests (also POST /busy_threshold).' },
  { name: 'active-prefill-tokens-threshold', kind: 'int', group: 'Routing queue', help: 'A worker is busy past this many active prefill tokens (also POST /busy_threshold).' },
  { name: 'router-queue-policy', kind: 'string', group: 'Routing queue', choices: ['fcfs', 'lcfs', 'wspt'], default: 'fcfs', help: 'Order within a strict_priority tier: first come first served, last come first served, or weighted shortest processing time. agent_hints.priority moves a request earlier.' },
  { name: 'router-queue-max-size', kind: 'int', group: 'Routing queue', min: 0, default: 4096, help: 'Requests the queue holds; beyond, new ones are rejected at once.' },
  { name: 'router-queue-timeout-secs', kind: 'number', group: 'Routing queue', default: 60, help: 'Longest wait in the queue before the request is rejected.' },
  { name: 'router-queue-reject-status', kind: 'int', group: 'Routing queue', min: 400, default: 529, help: 'HTTP status of a queue rejection (full or timed out), sent with Retry-After.' },
  { name: 'router-queue-retry-after-secs', kind: 'int', group: 'Routing queue', min: 0, default: 1, help: 'Retry-After seconds on a queue rejection.' },
  { name: 'router-priority-shift-ms', kind: 'number', group: 'Routing queue', default: 1000, help: 'fcfs/lcfs: each point of agent_hints.priority moves a queued request this much earlier.' },
  { name: 'shards', kind: 'int', group: 'HTTP', min: 1, help: 'uWS apps serving the port, each on its own thread with the whole request path; the kernel spreads connections over them. They share the router\'s load table, worker changes and busy thresholds; /metrics sums them all. Embedded mock engines run once, on the main thread. Default: the number of cores (os.availableParallelism()).' },
  { name: 'http-port', kind: 'int', group: 'HTTP', meta: 'P', default: 8000, help: 'Port to listen on; 0 picks a free port.' },
  { name: 'host', kind: 'string', group: 'HTTP', meta: 'ADDR', default: '0.0.0.0', help: 'Address to bind.' },
  { name: 'max-body-bytes', kind: 'int', group: 'HTTP', min: 1, default: 45 * 1024 * 1024, help: 'Largest accepted request body, in bytes (413 beyond).' },
  { name: 'max-prompt-tokens', kind: 'int', group: 'Model', min: 1, default: 131072, help: "Longest prompt accepted, in tokens, while the model's context length is unknown (no config.json and no engine GetModelInfo answer); longer prompts get a 400 before reaching an engine." },
  { name: 'max-concurrent-requests', kind: 'int', group: 'HTTP', min: 0, default: 0, help: 'Generation requests in flight at once in the whole process (every shard together) before new ones get 503 too_many_requests with Retry-After (0: no limit).' },
  { name: 'request-timeout-secs', kind: 'number', group: 'HTTP', default: 0, help: 'Longest a generation request may run; then 504 (or a final error event on a stream) and its engine request is aborted (0: no limit).' },
  { name: 'api-key', kind: 'string', group: 'HTTP', meta: 'KEY', help: 'Require this key as "Authorization: Bearer KEY" (or Anthropic\'s x-api-key) on the API endpoints; 401 otherwise.' },
  { name: 'admin-api-key', kind: 'string', group: 'HTTP', meta: 'KEY', help: 'Require this key (Bearer or x-api-key) on the admin endpoints (/admin/workers, /busy_threshold), from any address, instead of --api-key. Unset: they answer loopback clients only (403 otherwise).' },
  { name: 'metrics-api-key', kind: 'string', group: 'HTTP', meta: 'KEY', help: 'Require this key (Bearer or x-api-key) on GET /metrics; 401 otherwise. Unset: /metrics is public, like /health and /live.' },
  { name: 'cors-allow-origins', kind: 'list', group: 'HTTP', meta: 'ORIGINS', help: "Browser origins allowed to call the API (comma-separated, or '*'); none by default." },
  { name: 'shutdown-timeout-secs', kind: 'number', group: 'HTTP', default: 30, help: 'On SIGTERM/SIGINT: stop accepting, let in-flight requests finish for this long, then abort the rest.' },
  { name: 'metrics-prefix', kind: 'string', group: 'HTTP', meta: 'PREFIX', default: 'portico_frontend_', help: 'Prefix of every metric name on GET /metrics.' },
  { name: 'engine-first-response-timeout-secs', kind: 'number', group: 'Faults', default: 300, help: 'A generation whose worker sends no response message for this long ends with 504 and takes the worker out of rotation until its health check passes (a worker that accepts and never answers; generous, since a long prefill delays the first message too). 0: no limit.' },
  { name: 'health-check-interval-secs', kind: 'number', group: 'Faults', default: 2, min: 0, exclusiveMin: true, help: "How often each worker's HealthCheck rpc is polled; a worker taken out of rotation comes back on its next passing check." },
  { name: 'worker-breaker-failures', kind: 'int', group: 'Faults', min: 0, default: 5, help: 'Failed streams in a row (resets, engine errors that are not the request\'s fault) that take a worker out of rotation; one failed stream never does. 0: off (a lost connection still does).' },
  { name: 'worker-breaker-failure-rate', kind: 'number', group: 'Faults', default: 0.5, help: 'Share of failed streams (at least 20 ended in the last 10 s) that takes a worker out of rotation. 0: off.' },
  { name: 'stream-precommit-peek-ms', kind: 'number', group: 'Faults', default: 1000, help: 'A stream waits this long for its first event before committing the 200, so an engine that fails at once gets a real error status; then headers go out and keep-alives follow.' },
  { name: 'stream-keep-alive-secs', kind: 'number', group: 'Faults', default: 10, help: 'Once a stream is committed, an SSE comment (": keep-alive") this often until its first event (a long prefill). 0: none.' },
  { name: 'stream-stall-timeout-secs', kind: 'number', group: 'Faults', default: 60, help: 'A streaming client that reads nothing for this long is dropped: its engine request is aborted, a final error event is written where the socket still takes it, and the connection is closed (counted in stalled_streams_dropped_total). 0: never.' },
  { name: 'log-level', kind: 'string', group: 'Logging', choices: ['debug', 'info', 'warn', 'error'], default: 'info', help: 'Least severe level written.' },
  { name: 'log-format', kind: 'string', group: 'Logging', choices: ['text', 'json'], default: 'text', help: "'json' writes one JSON object per line, with request ids." },
  { name: 'log-requests', kind: 'bool', group: 'Logging', help: 'Log one line per finished request (method, path, model, status, duration, request id).' },
  { name: 'tool-call-parser', kind: 'string', group: 'Output parsing', meta: 'NAME', help: 'Parse tool calls out of the generated text with this parser. An unknown name is a startup error that lists the valid names.' },
  { name: 'reasoning-parser', kind: 'string', group: 'Output parsing', meta: 'NAME', help: 'Split reasoning out of the generated text with this parser. An unknown name is a startup error that lists the valid names.' },
];

export const SERVE_USAGE = 'Usage: portico serve --model-path DIR [options]';
export const SERVE_INTRO = `Serve the OpenAI-compatible and Anthropic HTTP APIs for one model, tokenizing natively
and generating on engine workers reached over gRPC.

Request handling also reads PORTICO_IGNORE_UNSUPPORTED_FIELDS=1 (drop unsupported request
fields instead of a 400; Dynamo's DYN_IGNORE_OPENAI_FE_UNSUPPORTED_FIELDS works too) and
PORTICO_DISABLE_NVEXT=1 (refuse nvext and ignore the routing headers).`;
