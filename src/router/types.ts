// What a request tells the router, and what the router hands back.

import type { Cancellation } from '../engine/types.js';
import type { Worker } from './worker-pool.js';
import type { PromptKeys } from './prompt-keys.js';

/** Routing inputs of one request (nvext, routing headers, agent hints). */
export interface RouteHints {
  /** nvext backend_instance_id / decode_worker_id or their header: route there directly. */
  workerId?: number;
  dpRank?: number;
  /** nvext prefill_worker_id or x-dynamo-prefill-instance-id: the prefill leg goes there (disaggregated models). */
  prefillWorkerId?: number;
  /** nvext prefill_dp_rank or x-dynamo-prefill-dp-rank. */
  prefillDpRank?: number;
  /**
   * The prefill pins came from the body (nvext), not only from headers: a model without
   * prefill workers refuses body pins (400) and ignores header pins, which gateways set on
   * every request.
   */
  prefillPinnedInBody?: boolean;
  /** Prefill routing headers, unread (protocol/nvext.ts): read by preprocess once the model is known. */
  prefillHeaders?: { id?: [string, string]; rank?: [string, string]; names: string[] };
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
  /**
   * The prompt's block keys, once a router computed them (kv mode). A disaggregated model's
   * two routers hash with the same seed, so the prefill router reuses the main router's.
   */
  keys?: PromptKeys;
  /** Workers not to choose (a migrating request's failed ones). */
  exclude?: ReadonlySet<number>;
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
  /**
   * Disaggregated serving: the prefill leg's dispatch, set when the worker above is a
   * decode worker and a prefill worker was chosen for the prompt.
   */
  prefill?: Dispatch;
}

export interface Router {
  route(req: RouteRequest): Dispatch | Promise<Dispatch>;
  /** The checks of route() that need no prompt tokens (a named worker, its dp_rank): run before tokenizing. */
  validate(hints: RouteHints): void;
  close(): void;
}
