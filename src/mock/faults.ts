// Engine failures on demand, for tests of how Portico maps and survives them. Off
// unless the engine was started with faults enabled (`portico mock-engine --faults`):
// then a prompt whose text contains `[[fault:KIND]]` fails at once, and
// `[[fault:KIND@N]]` fails after N output tokens (mid-stream), on both protocols,
// Generate and Embed alike (Embed only at once).
//
// A trigger fires on an engine of any role. Scoped to one role it fires only there, so a
// test of disaggregated serving can fail one side (the same prompt reaches both):
// `[[fault:KIND:prefill]]`, `[[fault:KIND:decode@N]]` (roles: aggregated, prefill, decode;
// `@N` after the role).
//
//   invalid_argument    INVALID_ARGUMENT, naming the engine request id and its own address
//   context_length      INVALID_ARGUMENT in the protocol's own words for a prompt past the
//                       context (SGLang's "The input (N tokens) is longer than the model's
//                       context length (M tokens).", vLLM's "This model's maximum context
//                       length is M tokens. However, your request has N input tokens.")
//   resource_exhausted  RESOURCE_EXHAUSTED (KV cache full)
//   unavailable         UNAVAILABLE
//   deadline_exceeded   DEADLINE_EXCEEDED
//   internal            INTERNAL, with a Python traceback in the message
//   reset               the HTTP/2 stream reset with ENHANCE_YOUR_CALM (no grpc-status)
//   goaway              the whole HTTP/2 connection closed with GOAWAY ENHANCE_YOUR_CALM
//                       (what a server's flood guard does to a connection; the engine lives on)
//   hang                no answer at all (no headers, no message) until the caller gives up
//   no_rendezvous       prefill role only (ignored elsewhere): the prefill leg answers as usual
//                       but never hands its KV over, so the decode leg waits for it until its
//                       rendezvous bound and then fails (src/mock/pd-leg.ts)

import { Code, ConnectError } from '@connectrpc/connect';

export const FAULT_KINDS = ['invalid_argument', 'context_length', 'resource_exhausted', 'unavailable', 'deadline_exceeded', 'internal', 'reset', 'goaway', 'hang', 'no_rendezvous'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** A worker's part in disaggregated serving. */
export type EngineRole = 'aggregated' | 'prefill' | 'decode';
const ROLES: readonly string[] = ['aggregated', 'prefill', 'decode'];

export interface Fault {
  kind: FaultKind;
  /** Output tokens sent before failing (0: at once). */
  after: number;
  /** Fires only on an engine of this role (unset: any). */
  role?: EngineRole;
}

const TRIGGER = /\[\[fault:([a-z_]+)(?::([a-z]+))?(?:@(\d+))?\]\]/g;

/** The fault a prompt asks of an engine of `role` (the first trigger scoped to it or to none), or null. */
export function faultIn(text: string, role: EngineRole = 'aggregated'): Fault | null {
  for (const m of text.matchAll(TRIGGER)) {
    if (!(FAULT_KINDS as readonly string[]).includes(m[1]!)) continue;
    if (m[2] !== undefined && (!ROLES.includes(m[2]) || m[2] !== role)) continue;
    const kind = m[1] as FaultKind;
    if (kind === 'no_rendezvous' && role !== 'prefill') continue;
    const f: Fault = { kind, after: m[3] ? Number(m[3]) : 0 };
    if (m[2] !== undefined) f.role = m[2] as EngineRole;
    return f;
  }
  return null;
}

/** Thrown by a Generate handler: the fast path resets the HTTP/2 stream instead of sending a status. */
export class StreamResetFault extends Error {
  constructor(
    readonly http2Code: number,
    /** Close the whole connection (GOAWAY) rather than one stream. */
    readonly connection = false,
  ) {
    super(`mock fault: ${connection ? 'close the connection' : 'reset the stream'} with HTTP/2 error ${http2Code}`);
  }
}

/** HTTP/2 ENHANCE_YOUR_CALM (RFC 9113 §7). */
export const ENHANCE_YOUR_CALM = 0xb;

export interface FaultContext {
  protocol: 'sglang' | 'vllm';
  requestId: string;
  promptTokens: number;
  maxContextLength: number;
  /** Where the engine listens (to prove Portico keeps it out of client messages). */
  address: string;
}

/**
 * The failure for `f`: a ConnectError or StreamResetFault to throw, or, for `hang`, a
 * promise that settles only when `signal` fires.
 */
export function faultError(f: Fault, c: FaultContext): Error {
  switch (f.kind) {
    case 'invalid_argument':
      return new ConnectError(`request ${c.requestId} at ${c.address}: sampling parameter top_k is invalid for this model`, Code.InvalidArgument);
    case 'context_length': {
      const n = Math.max(c.promptTokens, c.maxContextLength + 1);
      return new ConnectError(
        c.protocol === 'vllm'
          ? `This model's maximum context length is ${c.maxContextLength} tokens. However, your request has ${n} input tokens. Please reduce the length of the input messages.`
          : `The input (${n} tokens) is longer than the model's context length (${c.maxContextLength} tokens).`,
        Code.InvalidArgument,
      );
    }
    case 'resource_exhausted':
      return new ConnectError(`request ${c.requestId}: KV cache is full, cannot schedule`, Code.ResourceExhausted);
    case 'unavailable':
      return new ConnectError(`engine at ${c.address} is draining`, Code.Unavailable);
    case 'deadline_exceeded':
      return new ConnectError(`request ${c.requestId} exceeded its deadline in the scheduler`, Code.DeadlineExceeded);
    case 'internal':
      return new ConnectError(
        `Traceback (most recent call last):\n  File "/srv/engine/scheduler.py", line 812, in run_batch\n    raise RuntimeError("CUDA error: an illegal memory access (request ${c.requestId}, ${c.address})")`,
        Code.Internal,
      );
    case 'reset':
      return new StreamResetFault(ENHANCE_YOUR_CALM);
    case 'goaway':
      return new StreamResetFault(ENHANCE_YOUR_CALM, true);
    case 'hang':
      return new Error('hang');
    case 'no_rendezvous':
      return new Error('no_rendezvous is not a failure of the rpc');
  }
}

/** Resolves when `signal` fires (a `hang` fault waits on it). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
