// Several prompts in one request (batch completions) run as concurrent generations;
// their output events are merged into one stream, choices re-indexed prompt-major
// (prompt i, choice j -> i * n + j), and their usage summed into one closing event.

import type { OutputEvent, TokenCounts } from './outputs.js';

export async function* mergeOutputs(streams: AsyncIterable<OutputEvent>[], n: number): AsyncGenerator<OutputEvent> {
  if (streams.length === 1) {
    yield* streams[0];
    return;
  }
  const its = streams.map((s) => s[Symbol.asyncIterator]());
  const total: TokenCounts = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
  const pending = new Map<number, Promise<{ k: number; r: IteratorResult<OutputEvent> }>>();
  const pull = (k: number) => pending.set(k, its[k].next().then((r) => ({ k, r })));
  its.forEach((_, k) => pull(k));
  try {
    while (pending.size > 0) {
      const { k, r } = await Promise.race(pending.values());
      if (r.done) {
        pending.delete(k);
        continue;
      }
      const ev = r.value;
      if (ev.kind === 'end') {
        pull(k);
        total.promptTokens += ev.usage.promptTokens;
        total.completionTokens += ev.usage.completionTokens;
        total.cachedTokens += ev.usage.cachedTokens;
        continue;
      }
      // A text event's usage is read on demand, as of that event: take it before pulling
      // the next one (a spread would not copy it).
      const out: OutputEvent =
        ev.kind === 'text' ? { kind: 'text', index: k * n + ev.index, text: ev.text, tokenIds: ev.tokenIds, usage: ev.usage } : { ...ev, index: k * n + ev.index };
      pull(k);
      yield out;
    }
  } finally {
    // A consumer that stops early (client gone, error) closes every generation.
    await Promise.allSettled(its.map((it) => it.return?.()));
  }
  yield { kind: 'end', usage: total };
}
