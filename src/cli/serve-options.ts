// The options of `portico serve`, as one table (see options.ts).

import type { OptionSpec } from './options.js';

export const SERVE_OPTIONS: readonly OptionSpec[] = [
  { name: 'model-path', kind: 'string', group: 'Model', meta: 'DIR', required: true, help: 'A local Hugging Face layout folder: tokenizer.json and tokenizer_config.json (chat template), and config.json / generation_config.json when present.' },
  { name: 'model-name', kind: 'string', group: 'Model', meta: 'NAME', help: 'The name clients send as "model". Default: the folder\'s name.' },
  { name: 'worker', kind: 'list', group: 'Workers (at least one of --worker or --mock)', meta: 'URL', help: 'An engine worker: grpc://HOST:PORT (SGLang scheduler protocol) or vllm+grpc://HOST:PORT (vLLM engine protocol). Repeat the flag, or give a comma-separated list.' },
  { name: 'mock', kind: 'string', group: 'Workers (at least one of --worker or --mock)', meta: 'echo|sim', choices: ['echo', 'sim'], help: "Start in-process mock engines reached over real gRPC on loopback: 'echo' streams the prompt's tokens back, 'sim' simulates an engine (scheduler, KV cache, timing)." },
  { name: 'mock-workers', kind: 'int', group: 'Workers (at least one of --worker or --mock)', min: 1, default: 2, help: 'How many mock engines to start with --mock.' },
  { name: 'http-port', kind: 'int', group: 'HTTP', meta: 'P', default: 8000, help: 'Port to listen on; 0 picks a free port.' },
  { name: 'host', kind: 'string', group: 'HTTP', meta: 'ADDR', default: '0.0.0.0', help: 'Address to bind.' },
  { name: 'max-body-bytes', kind: 'int', group: 'HTTP', min: 1, default: 45 * 1024 * 1024, help: 'Largest accepted request body, in bytes (413 beyond).' },
  { name: 'max-concurrent-requests', kind: 'int', group: 'HTTP', min: 0, default: 0, help: 'Generation requests in flight at once before new ones get 503 (0: no limit).' },
  { name: 'api-key', kind: 'string', group: 'HTTP', meta: 'KEY', help: 'Require this key as "Authorization: Bearer KEY" (or Anthropic\'s x-api-key) on the API endpoints; 401 otherwise.' },
  { name: 'cors-allow-origins', kind: 'list', group: 'HTTP', meta: 'ORIGINS', help: "Browser origins allowed to call the API (comma-separated, or '*'); none by default." },
  { name: 'shutdown-timeout-secs', kind: 'number', group: 'HTTP', default: 30, help: 'On SIGTERM/SIGINT: stop accepting, let in-flight requests finish for this long, then abort the rest.' },
  { name: 'metrics-prefix', kind: 'string', group: 'HTTP', meta: 'PREFIX', default: 'portico_frontend_', help: 'Prefix of every metric name on GET /metrics.' },
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
