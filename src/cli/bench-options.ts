// The options of `portico bench`, as one table (see options.ts). Defaults that depend on
// other flags (concurrency, request count, lengths given by their aliases) are applied in
// bench.ts, so the table leaves them unset.

import type { OptionSpec } from './options.js';

export const BENCH_OPTIONS: readonly OptionSpec[] = [
  { name: 'url', kind: 'string', group: 'Target', meta: 'URL', default: 'http://127.0.0.1:8000', help: 'Base URL of an OpenAI-compatible server.' },
  { name: 'model', kind: 'string', group: 'Target', meta: 'NAME', help: "Model name to send. Default: the server's first model (GET /v1/models)." },
  { name: 'endpoint', kind: 'string', group: 'Target', choices: ['chat', 'completions'], default: 'chat', help: 'Which API to drive: /v1/chat/completions or /v1/completions.' },
  { name: 'api-key', kind: 'string', group: 'Target', meta: 'KEY', help: 'Sent as Authorization: Bearer KEY.' },
  { name: 'stream', kind: 'bool', group: 'Target', help: 'Stream the answers (SSE, with usage): needed for TTFT, TPOT and ITL. Without it only end-to-end latency is measured.' },
  { name: 'no-stream', kind: 'bool', group: 'Target', help: 'Do not stream (the default; kept for older scripts).' },
  { name: 'timeout', kind: 'number', group: 'Target', meta: 'S', min: 0, exclusiveMin: true, default: 600, help: 'Give up on one request after S seconds (counted as a timeout error).' },
  { name: 'concurrency', kind: 'int', group: 'Load', min: 1, help: 'Closed loop: this many sessions in flight at once. Default: 32 (when no --rate).' },
  { name: 'rate', kind: 'number', group: 'Load', min: 0, exclusiveMin: true, help: 'Open loop: new sessions per second (Poisson arrivals) instead of --concurrency.' },
  { name: 'max-concurrency', kind: 'int', group: 'Load', min: 1, help: 'Open loop only: at most this many requests in flight (an arrival waits for a free slot). Default: no cap.' },
  { name: 'requests', kind: 'int', group: 'Load', min: 1, help: 'Requests to count (after warm-up). Default: 500 unless --duration is given.' },
  { name: 'duration', kind: 'number', group: 'Load', meta: 'S', min: 0, exclusiveMin: true, help: 'Stop sending new requests after S seconds (those in flight finish and count). With --requests, whichever comes first.' },
  { name: 'warmup', kind: 'int', group: 'Load', min: 0, default: 0, help: 'Requests sent first, with the same load, and not counted.' },
  { name: 'sweep', kind: 'string', group: 'Load', meta: 'PARAM:V,V,...', help: 'Run one cell per value: concurrency:1,4,16 (closed loop) or rate:2,8,32 (open loop, capped by --max-concurrency). Each cell has its own warm-up and limits.' },
  { name: 'tokenizer', kind: 'string', group: 'Workload', meta: 'DIR', help: "The model's tokenizer folder (tokenizer.json): synthetic prompts are made to exact token lengths with it, and output tokens are counted with it when the server sends no usage." },
  { name: 'input-tokens', kind: 'int', group: 'Workload', min: 1, help: 'Prompt tokens per request (the shared prefix included; chat template tokens not). Default: 256.' },
  { name: 'isl', kind: 'int', group: 'Workload', min: 1, help: 'Alias of --input-tokens.' },
  { name: 'output-tokens', kind: 'int', group: 'Workload', min: 1, help: 'Output tokens per request (max_tokens, with ignore_eos). Default: 64.' },
  { name: 'osl', kind: 'int', group: 'Workload', min: 1, help: 'Alias of --output-tokens.' },
  { name: 'shared-prefix', kind: 'int', group: 'Workload', min: 0, default: 0, help: 'Tokens of a system prompt shared by the sessions (for prefix-cache and KV-routing studies).' },
  { name: 'prefixes', kind: 'int', group: 'Workload', min: 1, default: 1, help: 'How many distinct shared prefixes the sessions spread over.' },
  { name: 'turns', kind: 'int', group: 'Workload', min: 1, default: 1, help: 'Turns per session: each later turn resends the conversation so far (with the answers received) plus a new user message.' },
  { name: 'dataset', kind: 'string', group: 'Workload', meta: 'FILE', help: 'A JSONL file of ShareGPT conversations ({"conversations":[{"from":"human","value":...},...]}) or OpenAI request bodies ({"messages":[...]} / {"prompt":...}), used in order, cyclically.' },
  { name: 'seed', kind: 'int', group: 'Workload', min: 0, default: 1, help: 'Seed for the generated prompts and the arrival times.' },
  { name: 'slo', kind: 'string', group: 'Measures', meta: 'NAME:MS,...', help: 'Goodput: count requests meeting every bound, e.g. ttft:200,tpot:50 (also e2e:MS).' },
  { name: 'output', kind: 'string', group: 'Output', meta: 'DIR', help: 'Write DIR/summary.json, DIR/requests.jsonl (one row per request), DIR/report.html and DIR/report.png.' },
  { name: 'json', kind: 'bool', group: 'Output', help: 'Print summary.json to stdout instead of the table.' },
];

export const BENCH_USAGE = 'Usage: portico bench --url URL --tokenizer DIR [--concurrency N | --rate R] [--requests N | --duration S] [options]';
export const BENCH_INTRO = `Load an OpenAI-compatible server with LLM traffic and report request and token throughput,
TTFT, TPOT, inter-token latency (per gap and per request) and end-to-end latency
(p50/p90/p95/p99/max), goodput against --slo, and errors by kind. A progress line is shown
on a terminal. Loads only the URL given; every run is bounded by --requests or --duration.`;
