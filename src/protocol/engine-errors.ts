// What a client is told when the engine fails: the one mapping from an EngineError
// (src/engine/errors.ts) to an HTTP status, an error code and a clean message. The
// engine's own detail (worker URL, engine request id, its status text) stays in the
// log; a client sees the engine's words only for its own fault (a 400), and then with
// URLs and ids taken out. ApiError.from (errors.ts) calls this for every EngineError.
//
//   invalid_argument  400  (a prompt past the context: context_length_exceeded, with the numbers)
//   overloaded        503  + Retry-After   (engine RESOURCE_EXHAUSTED)
//   unavailable       503  + Retry-After   (connection refused or lost, stream reset)
//   timeout           504                  (DEADLINE_EXCEEDED, or no first response)
//   unimplemented     501
//   anything else     502
// A LoRA adapter load (op `loadAdapter`) is the admin's request: a worker that refuses it
// is a 400 adapter_load_failed naming the worker and the engine's (cleaned) reason, any
// other failure a 502 adapter_load_failed.

import type { EngineError } from '../engine/errors.js';

export interface EngineFailure {
  status: number;
  code: string;
  message: string;
  param?: string;
  type?: 'internal_error';
  /** Seconds, for the Retry-After header (503s). */
  retryAfter?: number;
}

/** Seconds a client is asked to wait after an overloaded or unavailable engine. */
export const ENGINE_RETRY_AFTER_SECS = 1;

/** What was asked of the engine: a generation, an embedding, or loading adapter `loadAdapter` on worker `worker`. */
export type EngineOp = 'generate' | 'embed' | { loadAdapter: string; worker: number };

/** `op`: what was asked of the engine, for the cases whose answer depends on it. */
export function engineFailure(err: EngineError, op: EngineOp = 'generate'): EngineFailure {
  if (typeof op === 'object') return adapterLoadFailure(err, op.loadAdapter, op.worker);
  switch (err.code) {
    case 'invalid_argument': {
      const raw = err.engineMessage || err.message;
      const ctx = contextLengthExceeded(raw);
      if (ctx) {
        return {
          status: 400,
          code: 'context_length_exceeded',
          message: `This model's maximum context length is ${ctx.limit} tokens. However, your request has ${ctx.requested} input tokens. Please reduce the length of the input.`,
        };
      }
      const why = clientSafe(raw, err);
      return { status: 400, code: 'invalid_request', message: why ? `the engine rejected the request: ${why}` : 'the engine rejected the request' };
    }
    case 'overloaded':
      return { status: 503, code: 'engine_overloaded', message: 'the engine is out of capacity for this request; retry shortly', retryAfter: ENGINE_RETRY_AFTER_SECS };
    case 'unavailable':
      return { status: 503, code: 'worker_unavailable', message: 'the engine worker is unavailable; retry shortly', retryAfter: ENGINE_RETRY_AFTER_SECS };
    case 'timeout':
      return { status: 504, code: 'engine_timeout', message: 'the engine did not answer in time' };
    case 'unimplemented':
      if (op === 'embed') return { status: 501, code: 'embeddings_unsupported', message: 'the engine worker does not serve embeddings' };
      return { status: 501, code: 'engine_unimplemented', message: 'the engine does not implement this operation' };
    case 'aborted':
    case 'internal':
    default:
      return { status: 502, code: 'engine_error', message: 'the engine failed to complete the request' };
  }
}

function adapterLoadFailure(err: EngineError, name: string, worker: number): EngineFailure {
  if (err.code === 'invalid_argument' || err.code === 'unimplemented') {
    const why = clientSafe(err.engineMessage || err.message, err);
    return { status: 400, code: 'adapter_load_failed', param: 'lora_path', message: `worker ${worker} refused to load LoRA adapter '${name}'${why ? `: ${why}` : ''}` };
  }
  return { status: 502, code: 'adapter_load_failed', type: 'internal_error', message: `worker ${worker} could not load LoRA adapter '${name}' (${err.code})` };
}

/**
 * The prompt length and context limit in an engine's "prompt too long" message, in the
 * phrasings SGLang and vLLM use (and the mock engine's own), or null:
 *  - SGLang: "The input (N tokens) is longer than the model's context length (M tokens)."
 *  - SGLang scheduler: "Input length (N tokens) exceeds the maximum allowed length (M tokens)."
 *  - SGLang: "Requested token count exceeds the model's maximum context length of M tokens.
 *    You requested a total of N tokens: ..."
 *  - vLLM: "The decoder prompt (length N) is longer than the maximum model length of M."
 *  - vLLM: "This model's maximum context length is M tokens. However, your request has N input
 *    tokens." (also "... you requested N tokens (...)").
 *  - mock engine: "prompt of N tokens exceeds the context of M", "input of N tokens is longer
 *    than the context length M" (Embed).
 */
export function contextLengthExceeded(msg: string): { requested: number; limit: number } | null {
  for (const [re, reqAt, limAt] of CONTEXT_PATTERNS) {
    const m = re.exec(msg);
    if (m) return { requested: Number(m[reqAt]), limit: Number(m[limAt]) };
  }
  return null;
}

const CONTEXT_PATTERNS: ReadonlyArray<readonly [RegExp, number, number]> = [
  [/input \((\d+) tokens\) is longer than the model's context length \((\d+) tokens\)/i, 1, 2],
  [/input length \((\d+) tokens\) exceeds the maximum allowed length \((\d+) tokens\)/i, 1, 2],
  [/maximum context length of (\d+) tokens\.?\s*you requested a total of (\d+) tokens/i, 2, 1],
  [/prompt \(length (\d+)\) is longer than the maximum model length of (\d+)/i, 1, 2],
  [/maximum context length is (\d+) tokens\.?\s*however,? (?:your request has|you requested) (\d+)/i, 2, 1],
  [/prompt of (\d+) tokens exceeds the context of (\d+)/i, 1, 2],
  [/input of (\d+) tokens is longer than the context length (\d+)/i, 1, 2],
];

/**
 * The engine's reason as a client may read it: its first line only (no traceback), with
 * URLs, host:port pairs and the engine request id taken out, and bounded in length.
 */
export function clientSafe(raw: string, err: Pick<EngineError, 'url'> & { requestId?: string }): string {
  let s = raw.split(/\r?\n/, 1)[0] ?? '';
  if (/^traceback\b/i.test(s)) return '';
  s = s.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"),;]*[^\s'"),;:.]/gi, '<url>');
  s = s.replace(/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b/g, '<address>');
  s = s.replace(/\[[0-9a-f:]+\](?::\d+)?/gi, '<address>');
  if (err.url) s = s.split(err.url).join('<url>');
  if (err.requestId) s = s.split(err.requestId).join('<request>');
  s = s.trim();
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}
