// A processor's chunks as the single-choice output events the Responses and Anthropic
// converters write from, closed by one `end` event with the usage the chunks reported.

import type { ChatCompletionChunk } from './contract.js';
import { ChunkReader, type ChunkEvent, type ChunkUsage } from './chunk-events.js';

export type TurnEvent = ChunkEvent | { kind: 'end'; usage: ChunkUsage };

export async function* turnEvents(chunks: AsyncIterable<ChatCompletionChunk>): AsyncGenerator<TurnEvent> {
  const reader = new ChunkReader();
  for await (const chunk of chunks) {
    for (const ev of reader.events(chunk)) if (ev.index === 0) yield ev;
  }
  yield { kind: 'end', usage: reader.usage ?? { promptTokens: 0, completionTokens: 0, cachedTokens: 0 } };
}
