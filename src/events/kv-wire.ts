// KV event batches on NATS: JSON, one batch per message, hashes as decimal strings
// (int64 does not survive JSON numbers). The same stored / removed / cleared records
// as the gRPC and ZMQ sources (src/engine/kv-events/types.ts); `seq` numbers a worker's
// batches from 1 so that a subscriber sees gaps and restarts.

import { toHash, type KvEvent } from '../engine/kv-events/index.js';

export type WireEvent =
  | { kind: 'stored'; parentHash: string | null; blocks: { hash: string; tokenIds: number[] }[] }
  | { kind: 'removed'; hashes: string[] }
  | { kind: 'cleared' };

export interface WireBatch {
  seq: number;
  dpRank: number;
  blockSize: number;
  events: WireEvent[];
}

export function encodeBatch(b: WireBatch): Uint8Array {
  return Buffer.from(JSON.stringify(b));
}

const HASH = /^-?[0-9]{1,20}$/;

function hash(v: unknown): bigint {
  if (typeof v !== 'string' || !HASH.test(v)) throw new TypeError('a block hash is not a decimal string');
  return toHash(BigInt(v));
}

function ids(v: unknown): number[] {
  if (!Array.isArray(v) || !v.every((x) => Number.isInteger(x) && x >= 0 && x < 2 ** 32)) throw new TypeError('token ids are not an array of u32');
  return v as number[];
}

/** A message's batch as the router's records, for worker `worker`; throws on anything malformed. */
export function decodeBatch(data: Uint8Array, worker: string): { seq: number; events: KvEvent[] } {
  const b = JSON.parse(Buffer.from(data).toString()) as Partial<WireBatch>;
  if (typeof b !== 'object' || b === null) throw new TypeError('not a batch object');
  const { seq, dpRank, blockSize, events } = b;
  if (!Number.isInteger(seq) || seq! < 1) throw new TypeError('seq is not a positive integer');
  if (!Number.isInteger(dpRank) || dpRank! < 0) throw new TypeError('dpRank is not a non-negative integer');
  if (!Number.isInteger(blockSize) || blockSize! < 1) throw new TypeError('blockSize is not a positive integer');
  if (!Array.isArray(events)) throw new TypeError('events is not an array');
  const out: KvEvent[] = [];
  for (const e of events as unknown[]) {
    const x = e as Record<string, unknown>;
    switch (x?.kind) {
      case 'stored': {
        if (!Array.isArray(x.blocks)) throw new TypeError('stored.blocks is not an array');
        const blocks = x.blocks.map((k: { hash?: unknown; tokenIds?: unknown }) => ({ hash: hash(k?.hash), tokenIds: ids(k?.tokenIds) }));
        out.push({ kind: 'stored', worker, dpRank: dpRank!, parentHash: x.parentHash === null || x.parentHash === undefined ? undefined : hash(x.parentHash), blocks, blockSize: blockSize! });
        break;
      }
      case 'removed':
        if (!Array.isArray(x.hashes)) throw new TypeError('removed.hashes is not an array');
        out.push({ kind: 'removed', worker, dpRank: dpRank!, hashes: x.hashes.map(hash) });
        break;
      case 'cleared':
        out.push({ kind: 'cleared', worker, dpRank: dpRank! });
        break;
      default:
        throw new TypeError(`unknown event kind ${JSON.stringify(String(x?.kind)).slice(0, 40)}`);
    }
  }
  return { seq: seq!, events: out };
}
