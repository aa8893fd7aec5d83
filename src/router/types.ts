// What a request tells the router, and what the router hands back.

import type { Cancellation } from '../engine/types.js';
import type { Worker } from './worker-pool.js';

/** Routing inputs of one request (nvext, routing headers, agent hints). */
export interface RouteHints {
  /** nvext backend_instance_id / decode_worker_id or their header: route there directly. */
  workerId?: number;
  dpRank?: number;
  /** X-Dynamo-Session-ID: pin the session to one worker (with session affinity on). */
  sessionId?: string;
  /** Cache namespace (x-tenant-id / nvext.cache_salt / top-level cache_salt). */
  cacheSalt?: string;
  /** LoRA adapter name: its own hash namespace. */
  lora?: string;
  /** agent_hints.priority: higher = more important. */
  priority?: number;
  /** agent_hints.strict_priority: queue tier, higher first. */
  strictPriority?: number;
  /** agent_hints.osl: expected output tokens. */
  osl?: number;
}

export interface RouteRequest {
  tokens: Uint32Array;
  hints: RouteHints;
  signal?: Cancellation;
  /** The request leaves no KV blocks behind (embeddings): nothing is predicted for it. */
  ephemeral?: boolean;
}

/** A routing decision, with the hooks that keep the worker's load current. */
export interface Dispatch {
  readonly worker: Worker;
  /** Leading prompt blocks the chosen worker was believed to hold. */
  readonly overlapBlocks: number;
  /** Time spent in the router queue (ms). */
  readonly queuedMs: number;
  /**
   * The data-parallel rank the request is pinned to: the request's own dp_rank, or
   * in kv mode the rank of the chosen worker holding most of the prompt. Undefined:
   * the engine picks.
   */
  readonly dpRank?: number;
  /** The first output token arrived: the prompt is no longer being prefilled. */
  firstToken(): void;
  /** `total` output tokens generated so far (for output block tracking). */
  output(total: number): void;
  /** The request ended (any way). Idempotent. */
  done(): void;
}

export interface Router {
  route(req: RouteRequest): Dispatch | Promise<Dispatch>;
  /** The checks of route() that need no prompt tokens (a named worker, its dp_rank): run before tokenizing. */
  validate(hints: RouteHints): void;
  close(): void;
}
