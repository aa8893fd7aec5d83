// The random part of a response id (chatcmpl-…, cmpl-…, msg_…, resp_…): the 32 lowercase hex
// digits of a random version-4 UUID, as `randomUUID()` without its dashes. Read straight out
// of a batch of random bytes as one hex string: randomUUID() builds its dashed string from
// twenty concatenations, and removing the dashes after it costs a runtime call and a copy,
// for every request.

import { randomFillSync } from 'node:crypto';

/** UUIDs drawn per refill of the random bytes (randomUUID() batches 128 too). */
const BATCH = 128;
const bytes = Buffer.alloc(16 * BATCH);
let next = BATCH;

export function randomHexId(): string {
  if (next === BATCH) {
    randomFillSync(bytes);
    next = 0;
  }
  const o = 16 * next++;
  // RFC 9562: version 4 in the high nibble of byte 6, variant 10 in the top bits of byte 8.
  bytes[o + 6] = (bytes[o + 6]! & 0x0f) | 0x40;
  bytes[o + 8] = (bytes[o + 8]! & 0x3f) | 0x80;
  return bytes.toString('hex', o, o + 16);
}
