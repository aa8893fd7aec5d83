// The one KV-event shape the router consumes, whatever the source (the
// SubscribeKvEvents gRPC stream of an SGLang or vLLM worker, or vLLM's ZMQ
// publisher). Events of one worker arrive in order; hashes are the engine's
// block hashes as signed 64-bit integers.

export interface KvBlockRef {
  hash: bigint;
  /** The block's token ids (block_size of them; fewer when the source did not say). */
  tokenIds: number[];
  /**
   * The images whose placeholder tokens the block holds (vLLM's multimodal extra keys), in
   * order: each image's identifier (Portico's content hash) and where its run starts
   * relative to the block's first token (negative: it began in an earlier block).
   */
  images?: { hash: string; offset: number }[];
}

export type KvEvent =
  /** Blocks cached, in prefix order; the first one's parent is `parentHash` (none = prefix root). */
  | {
      kind: 'stored';
      worker: string;
      dpRank: number;
      parentHash: bigint | undefined;
      blocks: KvBlockRef[];
      blockSize: number;
      /** The LoRA adapter the blocks were computed with, by name (its own hash namespace); unset: the base model. */
      loraName?: string;
      /** The engine named an adapter only by its internal number (no name): the blocks cannot be placed. */
      loraUnnamed?: boolean;
    }
  /** Blocks evicted. Unknown hashes are to be ignored. */
  | { kind: 'removed'; worker: string; dpRank: number; hashes: bigint[] }
  /** The rank dropped its whole prefix cache. */
  | { kind: 'cleared'; worker: string; dpRank: number }
  /**
   * Forget everything known about the worker (all ranks): the source
   * (re)connected, saw a sequence gap, or lost the stream. Events that follow
   * rebuild the worker's state from scratch.
   */
  | { kind: 'reset'; worker: string; reason: string };

/**
 * A rank's load as pushed on the KV-event stream (smg.grpc.common.EngineLoad),
 * when the worker sends one. Optional figures are undefined when not sent.
 */
export interface WorkerLoad {
  worker: string;
  dpRank: number;
  runningRequests: number;
  waitingRequests: number;
  /** Share of KV blocks held, [0, 1]. */
  tokenUsage: number;
  /** Share of KV held by running requests' computed tokens (not evictable), [0, 1]. */
  activeTokenUsage?: number;
  /** Prompt tokens of waiting requests not served from cache. */
  waitingUncachedTokens?: number;
  usedTokens?: number;
  capacityTokens?: number;
  genThroughput: number;
  maxRunningRequests: number;
  /** Increases per stream; orders samples. */
  sample: number;
}

/** Receives each source batch's events, in order. */
export type KvEventSink = (events: KvEvent[]) => void;

export interface KvEventSourceStats {
  /** Batches applied. */
  batches: number;
  events: number;
  /** Sequence gaps seen (each triggered a resync). */
  gaps: number;
  /** Connections made (the first included). */
  connects: number;
  /** Last sequence number applied (-1 = none). */
  lastSeq: number;
}

export interface KvEventSource {
  readonly worker: string;
  readonly stats: KvEventSourceStats;
  start(): void;
  close(): void;
}

export function newSourceStats(): KvEventSourceStats {
  return { batches: 0, events: 0, gaps: 0, connects: 0, lastSeq: -1 };
}

/** Engine hashes are int64 on gRPC and any-size ints (or bytes) in msgpack: one form. */
export function toHash(v: unknown): bigint {
  if (typeof v === 'bigint') return BigInt.asIntN(64, v);
  if (typeof v === 'number') return BigInt.asIntN(64, BigInt(Math.trunc(v)));
  if (v instanceof Uint8Array) {
    // Byte hashes (vLLM's sha256 modes): the first 8 bytes, big-endian.
    let h = 0n;
    for (let i = 0; i < Math.min(8, v.length); i++) h = (h << 8n) | BigInt(v[i]!);
    return BigInt.asIntN(64, h);
  }
  throw new TypeError(`not a block hash: ${String(v)}`);
}

/**
 * The images of a block's extra keys: the multimodal entries (identifier, offset), in
 * order; other keys (LoRA name, cache salt) are not images. An identifier that vLLM
 * prefixed with a LoRA name (`name:hash`) is the hash after the last colon.
 */
export function blockImages(keys: readonly { identifier: string; offset: number }[]): { hash: string; offset: number }[] | undefined {
  if (keys.length === 0) return undefined;
  return keys.map((k) => ({ hash: k.identifier.slice(k.identifier.lastIndexOf(':') + 1), offset: k.offset }));
}
