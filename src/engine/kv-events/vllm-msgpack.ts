// Decoding of vLLM's KV-event batches (msgspec structs, msgpack-encoded), in
// both layouts vLLM has used:
//   array-like (older): [ts, [event...], dp_rank?], an event being
//     ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium?, ...]
//     ["BlockRemoved", block_hashes, medium?, ...]
//     ["AllBlocksCleared"]
//   map-like (newer): {ts, events: [{type: "BlockStored", block_hashes, ...}], data_parallel_rank?}
// BlockStored's extra_keys (9th field) lists, per block, its hash inputs besides the tokens:
// (mm_identifier, offset) pairs for images, bare strings for a LoRA name or cache salt.
// Trailing fields may be missing (omit_defaults). token_ids is flat across
// the event's blocks.

import { decode } from '@msgpack/msgpack';

import { blockImages, toHash, type KvBlockRef, type KvEvent } from './types.js';

export function decodeVllmBatch(payload: Uint8Array, worker: string): { ts: number; dpRank: number; events: KvEvent[] } {
  const raw = decode(payload, { useBigInt64: true }) as unknown;
  let ts: unknown;
  let list: unknown;
  let rank: unknown;
  if (Array.isArray(raw)) [ts, list, rank] = raw;
  else if (raw && typeof raw === 'object') {
    const m = raw as Record<string, unknown>;
    ts = m['ts'];
    list = m['events'];
    rank = m['data_parallel_rank'];
  }
  if (!Array.isArray(list)) throw new TypeError('KV event batch without an events list');
  const dpRank = rank === undefined || rank === null ? 0 : Number(rank);
  const events: KvEvent[] = [];
  for (const ev of list) {
    const e = decodeEvent(ev, worker, dpRank);
    if (e) events.push(e);
  }
  return { ts: Number(ts ?? 0), dpRank, events };
}

function decodeEvent(ev: unknown, worker: string, dpRank: number): KvEvent | undefined {
  let tag: unknown;
  let f: (name: string, pos: number) => unknown;
  if (Array.isArray(ev)) {
    tag = ev[0];
    f = (_name, pos) => ev[pos];
  } else if (ev && typeof ev === 'object') {
    const m = ev as Record<string, unknown>;
    tag = m['type'];
    f = (name) => m[name];
  } else return undefined;
  switch (tag) {
    case 'BlockStored': {
      const hashes = (f('block_hashes', 1) as unknown[]).map(toHash);
      const parent = f('parent_block_hash', 2);
      const tokens = ((f('token_ids', 3) as unknown[]) ?? []).map(Number);
      const blockSize = Number(f('block_size', 4) ?? 0) || (hashes.length ? Math.floor(tokens.length / hashes.length) : 0);
      const extra = f('extra_keys', 8);
      const blocks: KvBlockRef[] = hashes.map((hash, i) => {
        const b: KvBlockRef = { hash, tokenIds: tokens.slice(i * blockSize, (i + 1) * blockSize) };
        const images = Array.isArray(extra) ? multimodalKeys(extra[i]) : undefined;
        if (images) b.images = images;
        return b;
      });
      // vLLM names the adapter (lora_name, 8th field) besides its number (lora_id, 6th).
      const loraName = f('lora_name', 7);
      const loraId = f('lora_id', 5);
      return {
        kind: 'stored',
        worker,
        dpRank,
        parentHash: parent === null || parent === undefined ? undefined : toHash(parent),
        blocks,
        blockSize,
        ...(typeof loraName === 'string' && loraName !== '' ? { loraName } : loraId !== null && loraId !== undefined && loraId !== 0 ? { loraUnnamed: true } : {}),
      };
    }
    case 'BlockRemoved':
      return { kind: 'removed', worker, dpRank, hashes: (f('block_hashes', 1) as unknown[]).map(toHash) };
    case 'AllBlocksCleared':
      return { kind: 'cleared', worker, dpRank };
    default:
      return undefined; // an event kind this version does not know
  }
}

/** The (identifier, offset) pairs of one block's extra keys: its images. */
function multimodalKeys(keys: unknown): { hash: string; offset: number }[] | undefined {
  if (!Array.isArray(keys)) return undefined;
  const mm: { identifier: string; offset: number }[] = [];
  for (const k of keys) {
    if (Array.isArray(k) && k.length === 2 && typeof k[0] === 'string') mm.push({ identifier: k[0], offset: Number(k[1]) });
  }
  return blockImages(mm);
}
