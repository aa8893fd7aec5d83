// The options of `portico bench`, as one table (see options.ts).

import type { OptionSpec } from './options.js';

export const BENCH_OPTIONS: readonly OptionSpec[] = [
  { name: 'url', kind: 'string', group: 'Target', meta: 'URL', default: 'http://127.0.0.1:8000', help: 'Base URL of an OpenAI-compatible server.' },
  { name: 'model', kind: 'string', group: 'Target', meta: 'NAME', help: "Model name to send. Default: the server's first model (GET /v1/models)." },
  { name: 'endpoint', kind: 'string', group: 'Target', choices: ['chat', 'completions'], default: 'chat', help: 'Which API to drive.' },
  { name: 'api-key', kind: 'string', group: 'Target', meta: 'KEY', help: 'Sent as Authorization: Bearer KEY.' },
  { name: 'concurrency', kind: 'int', group: 'Load', min: 1, default: 32, help: 'Requests in flight at once (closed loop).' },
  { name: 'requests', kind: 'int', group: 'Load', min: 1, default: 500, help: 'Requests to send in all.' },
  { name: 'rate', kind: 'number', group: 'Load', min: 0, default: 0, help: 'Open-loop arrival rate in requests/s (Poisson); 0 sends as fast as concurrency allows.' },
  { name: 'isl', kind: 'int', group: 'Workload', min: 1, default: 256, help: 'Approximate input length in tokens (random words).' },
  { name: 'osl', kind: 'int', group: 'Workload', min: 1, default: 64, help: 'Output tokens per request (max_tokens, with ignore_eos).' },
  { name: 'shared-prefix', kind: 'int', group: 'Workload', min: 0, default: 0, help: 'Tokens of a system prompt shared by every request (for prefix-cache and KV-routing studies).' },
  { name: 'prefixes', kind: 'int', group: 'Workload', min: 1, default: 1, help: 'How many distinct shared prefixes the requests spread over.' },
  { name: 'no-stream', kind: 'bool', group: 'Workload', help: 'Use non-streaming requests (no TTFT/ITL then).' },
  { name: 'seed', kind: 'int', group: 'Workload', min: 0, default: 1, help: 'Seed for the generated prompts.' },
  { name: 'json', kind: 'bool', group: 'Output', help: 'Print the summary as one JSON object.' },
];

export const BENCH_USAGE = 'Usage: portico bench [options]';
export const BENCH_INTRO = `Load an OpenAI-compatible server with LLM traffic and report request and token throughput,
time to first token, inter-token latency and end-to-end latency (p50/p90/p99). Loads only the
URL given; every run is bounded by --requests.`;
