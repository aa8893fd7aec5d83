// Random ids of requests and responses, read out of one batch of random bytes: the request id
// (a random version-4 UUID, as `randomUUID()` gives it) and the random part of a response id
// (chatcmpl-…, cmpl-…, msg_…, resp_…: the same UUID's 32 hex digits without dashes).
// `randomUUID()` builds its string from twenty concatenations, and removing the dashes after
// it costs a runtime call and a copy; here each id is one string read out of a buffer.

import { randomFillSync } from 'node:crypto';

/** UUIDs drawn per refill of the random bytes (randomUUID() batches 128 too). */
const BATCH = 128;
const bytes = Buffer.alloc(16 * BATCH);
let next = BATCH;
/** Where a dashed UUID is written before it is read out as one string. */
const dashed = Buffer.alloc(36);
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** The offset in `bytes` of 16 fresh random bytes, made a version-4 UUID (RFC 9562). */
function nextUuid(): number {
  if (next === BATCH) {
    randomFillSync(bytes);
    next = 0;
  }
  const o = 16 * next++;
  // Version 4 in the high nibble of byte 6, variant 10 in the top bits of byte 8.
  bytes[o + 6] = (bytes[o + 6]! & 0x0f) | 0x40;
  bytes[o + 8] = (bytes[o + 8]! & 0x3f) | 0x80;
  return o;
}

/** 32 lowercase hex digits of a random version-4 UUID (`randomUUID()` without its dashes). */
export function randomHexId(): string {
  const o = nextUuid();
  return bytes.toString('hex', o, o + 16);
}

/** A random version-4 UUID, lowercase and dashed, as `randomUUID()` returns it. */
export function randomUuid(): string {
  const o = nextUuid();
  let p = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) dashed[p++] = 0x2d;
    const b = bytes[o + i]!;
    dashed[p++] = HEX[b >> 4]!;
    dashed[p++] = HEX[b & 15]!;
  }
  return dashed.toString('latin1', 0, 36);
}
