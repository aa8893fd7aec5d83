// An engine stream read to its end: its tokens, chunks and completions (optionally slowly,
// to exercise backpressure).

import type { EngineEvent, GenerateDone, TokenChunk } from '../../src/engine/types.js';

export async function collect(it: AsyncIterable<EngineEvent>, slowMs = 0) {
  const tokens: number[] = [];
  const chunks: TokenChunk[] = [];
  const done: GenerateDone[] = [];
  for await (const ev of it) {
    if (ev.kind === 'chunk') {
      tokens.push(...ev.chunk.tokenIds);
      chunks.push(ev.chunk);
    } else done.push(ev.done);
    if (slowMs) await new Promise((r) => setTimeout(r, slowMs));
  }
  return { tokens, chunks, done };
}
