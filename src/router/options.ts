// Router configuration: modes and every knob, with the defaults `portico serve` uses.

import type { QueuePolicy } from './queue.js';

export type RouterMode = 'round-robin' | 'random' | 'least-loaded' | 'power-of-two' | 'kv' | 'direct';
export const ROUTER_MODES: readonly RouterMode[] = ['round-robin', 'random', 'least-loaded', 'power-of-two', 'kv', 'direct'];

export interface RouterOptions {
  mode: RouterMode;
  /** Tokens per KV block; must match the engines' block size. */
  blockSize: number;
  hashSeed?: number;
  /** Weight of prefill blocks against decode blocks in the kv cost. */
  prefillWeight: number;
  /** 0: lowest cost; above 0: softmax sampling over costs. */
  temperature: number;
  /** Subscribe to workers' KV events (kv mode). Off: predicted blocks only. */
  kvEvents: boolean;
  /** Lifetime of predicted blocks (workers without events, salted requests). */
  predictedTtlSecs: number;
  /** Workers with events: how long a dispatched request's blocks count as there before its stored event (0: not at all). */
  inflightTtlSecs: number;
  /** Count output blocks as they are generated (placeholders up to agent_hints.osl). */
  trackOutputBlocks: boolean;
  /** Turns queueing on: a worker is busy past this fraction of maxBatchedTokens of active prefill. */
  queueThreshold?: number;
  maxBatchedTokens: number;
  activePrefillTokensThreshold?: number;
  activeDecodeBlocksThreshold?: number;
  queuePolicy: QueuePolicy;
  queueMaxSize: number;
  queueTimeoutSecs: number;
  queueRejectStatus: number;
  retryAfterSecs: number;
  /** fcfs/lcfs: each point of agent_hints.priority moves a request this much earlier. */
  priorityShiftMs: number;
  /** 0: session affinity off. */
  sessionAffinityTtlSecs: number;
  /** Rows of the shared load table. */
  maxWorkers: number;
}

export const DEFAULT_ROUTER_OPTIONS: RouterOptions = {
  mode: 'round-robin',
  blockSize: 16,
  prefillWeight: 1,
  temperature: 0,
  kvEvents: true,
  predictedTtlSecs: 120,
  inflightTtlSecs: 2,
  trackOutputBlocks: false,
  maxBatchedTokens: 8192,
  queuePolicy: 'fcfs',
  queueMaxSize: 4096,
  queueTimeoutSecs: 60,
  queueRejectStatus: 529,
  retryAfterSecs: 1,
  priorityShiftMs: 1000,
  sessionAffinityTtlSecs: 0,
  maxWorkers: 1024,
};
