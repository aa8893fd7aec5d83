// The mock engine's embeddings: a deterministic vector per token-id sequence. The
// ids are hashed (FNV-1a over the 32-bit ids, mixed with the engine seed) into the
// seed of a small PRNG (mulberry32) that fills `dim` values in [-1, 1); the vector is
// then L2-normalised, as a real embedding model's pooler output usually is. The same
// ids always give the same vector; any change to the ids gives an unrelated one.

import { Code, ConnectError } from '@connectrpc/connect';

/** The dimension the mock reports when none is configured. */
export const DEFAULT_EMBEDDING_DIM = 256;

export function mockEmbedding(ids: ArrayLike<number>, dim: number, seed = 0): Float32Array {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < ids.length; i++) {
    h ^= ids[i]! >>> 0;
    h = Math.imul(h, 0x01000193);
  }
  let s = h >>> 0;
  const v = new Float32Array(dim);
  let norm = 0;
  for (let j = 0; j < dim; j++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const x = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
    v[j] = x;
    norm += x * x;
  }
  const k = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let j = 0; j < dim; j++) v[j] = v[j]! * k;
  return v;
}

/** Checks shared by both protocols' Embed handlers; throws the rpc's status. */
export function embedInput(requestId: string, ids: number[] | undefined, maxContextLength: number, vocabSize: number): number[] {
  if (!requestId) throw new ConnectError('request_id is required', Code.InvalidArgument);
  if (!ids) throw new ConnectError('tokenized input is required', Code.InvalidArgument);
  if (ids.length === 0) throw new ConnectError('input_ids must not be empty', Code.InvalidArgument);
  if (ids.length > maxContextLength) {
    throw new ConnectError(`input of ${ids.length} tokens is longer than the context length ${maxContextLength}`, Code.InvalidArgument);
  }
  for (const id of ids) if (id < 0 || id >= vocabSize) throw new ConnectError(`token id ${id} is outside the vocabulary (${vocabSize})`, Code.InvalidArgument);
  return ids;
}
