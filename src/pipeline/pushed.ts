// An engine stream in push mode (EngineEvents), whatever the client returned: the gRPC
// clients' own streams push already; any other AsyncIterable is pumped.

import type { EngineEvent } from '../engine/types.js';
import { isEngineEvents, type EngineEvents } from '../engine/generate-stream.js';
import { pumpStream } from '../engine/grpc-h2.js';

/** The engine client's stream in push mode: its own, or its iterator read one message at a time. */
export function pushed(s: AsyncIterable<EngineEvent>): EngineEvents {
  if (isEngineEvents(s)) return s;
  const it = s[Symbol.asyncIterator]();
  let holder: { hold(): void; release(): void } | undefined;
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: () => it.next(),
    return: async () => (await it.return?.()) ?? { value: undefined, done: true },
    pipe(h) {
      holder = pumpStream(it, { message: (ev) => h.event(ev), end: () => h.end(), fail: (err) => h.fail(err) });
    },
    hold: () => holder?.hold(),
    release: () => holder?.release(),
  };
}
