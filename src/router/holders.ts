// Who holds a block in the prefix index: one (worker slot, data-parallel rank) pair.
// A worker running several DP ranks has one KV cache per rank, so a prefix cached on
// rank 1 is of no use to a request the engine places on rank 0; the index keeps the
// ranks apart and the router pins a request to the rank that holds its prefix.
// Holder ids are dense: slot × MAX_DP_RANKS + rank (rank 0 for a worker without DP).

/** Ranks per worker the index can tell apart; events of higher ranks are dropped. */
export const MAX_DP_RANKS = 64;

export function holderOf(slot: number, rank: number): number {
  return slot * MAX_DP_RANKS + rank;
}

export function slotOf(holder: number): number {
  return Math.floor(holder / MAX_DP_RANKS);
}
