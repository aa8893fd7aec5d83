// Portico's own KV block hashes, computed from token ids. Each block's hash is
// chained on its parent's, so one hash names a whole prefix (a node of the prefix
// tree). Two independent 32-bit multiply-rotate lanes give 64 bits; the index keys
// a block by 53 of them (a JS number, so Maps stay fast: no BigInt on the hot path).
// The chain starts from a seed mixed with the cache salt and LoRA name, so salted
// or adapter requests can never match unsalted blocks.

export interface Lanes {
  a: number;
  b: number;
}

const A1 = 0xcc9e2d51;
const A2 = 0x1b873593;
const B1 = 0x85ebca6b;
const B2 = 0xc2b2ae35;
const TWO32 = 4294967296;

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The 53-bit index key of a block whose two lanes are (a, b). */
export function keyOf(a: number, b: number): number {
  return (b & 0x1fffff) * TWO32 + (a >>> 0);
}

/** Hash the UTF-16 code units of a string into two lanes (seeds, not hot). */
function hashString(s: string, a: number, b: number): Lanes {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, A1);
    a = (a << 13) | (a >>> 19);
    b = Math.imul(b ^ c, B1);
    b = (b << 15) | (b >>> 17);
  }
  return { a: fmix(a ^ s.length), b: fmix(b ^ (s.length * 7)) };
}

export const DEFAULT_HASH_SEED = 0x5eed1234;

/** The root of a request's chain: seed, cache salt, LoRA adapter. */
export function rootLanes(seed = DEFAULT_HASH_SEED, salt?: string, lora?: string): Lanes {
  let r: Lanes = { a: fmix(seed ^ 0x9e3779b9), b: fmix(Math.imul(seed, 0x27d4eb2f) ^ 0x165667b1) };
  // A tag byte per namespace part: salt "x" and lora "x" must differ.
  if (salt) r = hashString('s\u0000' + salt, r.a, r.b);
  if (lora) r = hashString('l\u0000' + lora, r.a, r.b);
  return r;
}

/** Chain one block of `blockSize` tokens starting at `off` onto `parent`; writes into `out`. */
export function chainBlock(parent: Lanes, tokens: ArrayLike<number>, off: number, blockSize: number, out: Lanes): void {
  let a = parent.a ^ 0x3c6ef372;
  let b = parent.b ^ 0xa54ff53a;
  const end = off + blockSize;
  for (let i = off; i < end; i++) {
    const t = tokens[i]!;
    let k = Math.imul(t, A1);
    k = (k << 15) | (k >>> 17);
    a ^= Math.imul(k, A2);
    a = (a << 13) | (a >>> 19);
    a = (Math.imul(a, 5) + 0xe6546b64) | 0;
    let m = Math.imul(t ^ 0x61c88647, B1);
    m = (m << 13) | (m >>> 19);
    b ^= Math.imul(m, B2);
    b = (b << 17) | (b >>> 15);
    b = (Math.imul(b, 9) + 0x38495ab5) | 0;
  }
  out.a = fmix(a ^ blockSize);
  out.b = fmix(b ^ a);
}

/** Keys of every full block of `tokens`, in prefix order (chainBlock, inlined: this is the per-request cost). */
export function blockKeys(tokens: ArrayLike<number>, blockSize: number, root: Lanes): Float64Array {
  const n = Math.floor(tokens.length / blockSize);
  const keys = new Float64Array(n);
  let pa = root.a;
  let pb = root.b;
  for (let blk = 0, off = 0; blk < n; blk++, off += blockSize) {
    let a = pa ^ 0x3c6ef372;
    let b = pb ^ 0xa54ff53a;
    for (let i = off, end = off + blockSize; i < end; i++) {
      const t = tokens[i]!;
      let k = Math.imul(t, A1);
      k = (k << 15) | (k >>> 17);
      a ^= Math.imul(k, A2);
      a = (a << 13) | (a >>> 19);
      a = (Math.imul(a, 5) + 0xe6546b64) | 0;
      let m = Math.imul(t ^ 0x61c88647, B1);
      m = (m << 13) | (m >>> 19);
      b ^= Math.imul(m, B2);
      b = (b << 17) | (b >>> 15);
      b = (Math.imul(b, 9) + 0x38495ab5) | 0;
    }
    pa = fmix(a ^ blockSize);
    pb = fmix(b ^ a);
    keys[blk] = (pb & 0x1fffff) * TWO32 + pa;
  }
  return keys;
}

/**
 * The id an image's j-th placeholder token is hashed as: derived from the image's content
 * hash (hex) and j, above any vocabulary (bit 31 set). A request's prompt and an engine's
 * stored blocks (whose events name the image and where its run starts) map the same image
 * to the same ids; different images differ.
 */
export function imageRouteId(hash: string, j: number): number {
  let x = (parseInt(hash.slice(0, 8), 16) + j) | 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  x ^= x >>> 16;
  return (x | 0x80000000) >>> 0;
}

/**
 * A stored block's token ids with its images' placeholder tokens replaced by their
 * imageRouteId (`images`: each image's hash and where its run starts relative to the
 * block's first token, negative when it began in an earlier block, in order). A run is the
 * stretch of equal tokens from its start, ending at the next image's start.
 */
export function imageBlockTokens(tokens: readonly number[], images: readonly { hash: string; offset: number }[]): number[] {
  const out = tokens.slice();
  for (let k = 0; k < images.length; k++) {
    const { hash, offset } = images[k]!;
    const start = Math.max(offset, 0);
    const stop = Math.min(k + 1 < images.length ? Math.max(images[k + 1]!.offset, 0) : tokens.length, tokens.length);
    const pad = tokens[start];
    for (let i = start; i < stop && tokens[i] === pad; i++) out[i] = imageRouteId(hash, i - offset);
  }
  return out;
}
