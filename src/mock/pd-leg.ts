// One leg of a disaggregated request on the mock engine: what a prefill leg does once its
// prompt is computed (hold the KV for the decode worker), and what a decode leg does before
// it runs (take the KV from the prefill worker, pay the transfer time). The protocol files
// decide which leg a request is (sglang-pd.ts, vllm-pd.ts); service-common.ts runs it.
//
// A hand-over that fails ends the decode leg as each engine does:
//   SGLang  the scheduler aborts the request with HTTP 500, which its gRPC servicer sends as
//           status INTERNAL, message "Decode transfer failed for request rank=0
//           decode_req.req.rid='ID' decode_req.req.bootstrap_room=ROOM with exception
//           KVTransferError(bootstrap_room=ROOM): WHY" (WHY: "Request ROOM timed out after
//           30.0s in KVPoll.WaitingForInput" past the bound; "Failed to get kvcache from
//           prefill instance, it might be dead" when the side channel is unreachable;
//           "Aborted by AbortReq." when the prefill leg failed or was aborted).
//   vLLM    a KV load failure under vLLM's default kv_load_failure_policy "fail" finishes the
//           request with finish_reason "error" and no tokens (a GenerateComplete, status OK);
//           vLLM's own HTTP server always turns that reason into a 500.

import { Code, ConnectError } from '@connectrpc/connect';

import { fetchKv, type FetchResult } from './kv-fetch.js';
import type { KvPayload } from './kv-rendezvous.js';
import type { MockContext } from './mock-context.js';
import type { CoreOutput, CoreRequest } from './sim-core.js';

export type PdPlan =
  | {
      role: 'prefill';
      protocol: 'sglang' | 'vllm';
      /** Where the KV is held for the decode leg (kv-rendezvous.ts key). */
      key: string;
      /** SGLang: the leg answers only once the decode worker took the KV (or the bound ran out). */
      answerAfterTaken: boolean;
      room?: number;
    }
  | {
      role: 'decode';
      protocol: 'sglang' | 'vllm';
      host: string;
      port: number;
      key: string;
      room?: number;
    };

export type Received = { kind: 'ok'; tokens: number } | { kind: 'cancelled' } | { kind: 'failed'; why: string };

/** Decode leg: take the prompt's KV from the prefill worker, then wait the transfer time. */
export async function receiveKv(m: MockContext, req: CoreRequest, plan: Extract<PdPlan, { role: 'decode' }>, signal: AbortSignal): Promise<Received> {
  const r: FetchResult = await fetchKv(plan.host, plan.port, plan.key, m.rendezvousTimeoutMs, signal);
  switch (r.kind) {
    case 'cancelled':
      return r;
    case 'timeout':
      return { kind: 'failed', why: `Request ${plan.room ?? plan.key} timed out after ${(r.afterMs / 1000).toFixed(1)}s in KVPoll.WaitingForInput` };
    case 'unreachable':
      return { kind: 'failed', why: 'Failed to get kvcache from prefill instance, it might be dead' };
    case 'failed':
      return { kind: 'failed', why: 'Aborted by AbortReq.' };
    case 'ok':
      break;
  }
  const mismatch = promptMismatch(r.payload, req.prompt);
  if (mismatch) return { kind: 'failed', why: mismatch };
  const tokens = Math.max(0, req.prompt.length - 1);
  const ms = (m.kvTransferMsPerToken * tokens) / m.core.timing.o.speedupRatio;
  if (ms > 0) {
    m.kvTransfersInFlight++;
    const done = await delay(ms, signal);
    m.kvTransfersInFlight--;
    if (!done) return { kind: 'cancelled' };
  }
  return { kind: 'ok', tokens };
}

/** The decode leg's end when the hand-over failed: SGLang's status, or vLLM's "error" finishes. */
export function receiveFailure(plan: PdPlan, req: CoreRequest, why: string): { error: ConnectError } | { outputs: CoreOutput[] } {
  if (plan.protocol === 'vllm') return { outputs: finishes(req, 'error') };
  const room = plan.room ?? 0;
  return {
    error: new ConnectError(
      `Decode transfer failed for request rank=0 decode_req.req.rid='${req.id}' decode_req.req.bootstrap_room=${room} with exception KVTransferError(bootstrap_room=${room}): ${why}`,
      Code.Internal,
    ),
  };
}

/** SGLang's prefill leg whose KV nobody took within the bound. */
export function handOverTimeout(m: MockContext, req: CoreRequest, room: number): ConnectError {
  return new ConnectError(
    `Prefill transfer failed for request rank=0 req.rid='${req.id}' req.bootstrap_room=${room} with exception KVTransferError(bootstrap_room=${room}): Request ${room} timed out after ${(m.rendezvousTimeoutMs / 1000).toFixed(1)}s in KVPoll.Bootstrapping`,
    Code.Internal,
  );
}

/** What the prefill leg hands over. */
export function payloadOf(m: MockContext, req: CoreRequest): KvPayload {
  const tokenIds = Array.from(req.prompt);
  return { tokenIds, blockSize: m.core.o.blockSize, blockHashes: m.core.blockHashes(tokenIds) };
}

/** Every choice of `req` ending now with `reason` and no tokens. */
export function finishes(req: CoreRequest, reason: string): CoreOutput[] {
  const out: CoreOutput[] = [];
  for (let index = 0; index < Math.max(1, req.n); index++) {
    out.push({ kind: 'finish', index, reason, outputIds: [], promptTokens: req.prompt.length, completionTokens: 0, cachedTokens: 0 });
  }
  return out;
}

/** Resolves true after `ms`, false as soon as `signal` fires. */
export function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves with `p`'s value, or with `whenAborted` as soon as `signal` fires. */
export function orAborted<T>(p: Promise<T>, signal: AbortSignal, whenAborted: T): Promise<T> {
  if (signal.aborted) return Promise.resolve(whenAborted);
  return new Promise<T>((resolve) => {
    const onAbort = () => resolve(whenAborted);
    signal.addEventListener('abort', onAbort, { once: true });
    void p.then((v) => {
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    });
  });
}

/** The mock's own check: a decode leg given another prompt's KV is a router bug, made loud. */
function promptMismatch(p: KvPayload, prompt: ArrayLike<number>): string | null {
  const ids = Array.isArray(p.tokenIds) ? p.tokenIds : [];
  let same = ids.length === prompt.length;
  for (let i = 0; same && i < ids.length; i++) same = ids[i] === prompt[i];
  return same ? null : `the prefill worker's KV is of another prompt (${ids.length} tokens; this request has ${prompt.length})`;
}
