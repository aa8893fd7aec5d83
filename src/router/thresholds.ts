// When a worker counts as busy. Queueing is on only with --router-queue-threshold;
// then a worker is busy when any set threshold is reached:
//   active prefill tokens ≥ queue threshold × max batched tokens
//   active prefill tokens ≥ active_prefill_tokens_threshold (absolute)
//   active decode blocks ≥ active_decode_blocks_threshold × KV capacity blocks
// A request waits in the queue only while every worker is busy.

import { LoadField, type LoadTable } from './load-table.js';

export interface BusyThresholds {
  /** Fraction of max batched tokens of active prefill (the --router-queue-threshold). */
  queueThreshold?: number;
  maxBatchedTokens: number;
  /** Absolute active prefill tokens. */
  activePrefillTokens?: number;
  /** Fraction in (0, 1] of KV capacity held by active decode blocks. */
  activeDecodeBlocks?: number;
}

export function isBusy(load: LoadTable, slot: number, t: BusyThresholds): boolean {
  const prefill = load.get(slot, LoadField.PrefillTokens);
  if (t.queueThreshold !== undefined && prefill >= t.queueThreshold * t.maxBatchedTokens) return true;
  if (t.activePrefillTokens !== undefined && prefill >= t.activePrefillTokens) return true;
  if (t.activeDecodeBlocks !== undefined) {
    const cap = load.get(slot, LoadField.CapacityBlocks);
    if (cap > 0 && load.get(slot, LoadField.DecodeBlocks) >= t.activeDecodeBlocks * cap) return true;
  }
  return false;
}
