// Several prompts in one request (batch completions) run as concurrent generations;
// their output events are merged into one stream, choices re-indexed prompt-major
// (prompt i, choice j -> i * n + j), and their usage summed into one closing event.

import type { OutputEvent, ParsedEvent, TokenCounts } from './outputs.js';
import { STOP, type GenerationSink, type RunningGeneration } from './run.js';

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

/**
 * The same merge for runGeneration: `count` generations (one per prompt) into one sink. Each
 * runs into its part; choices are re-indexed prompt-major, the usage of their end events
 * summed into the one end event handed on once every part ended. When one fails, the others
 * are stopped and its failure is the merge's.
 */
export async function runMerged(count: number, n: number, sink: GenerationSink, run: (k: number, part: GenerationSink) => Promise<void>): Promise<void> {
  if (count === 1) return run(0, sink);
  const total: TokenCounts = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
  const running: (RunningGeneration | null)[] = new Array<RunningGeneration | null>(count).fill(null);
  let ended = 0;
  let failed = false;
  let failure: unknown;
  const part = (k: number): GenerationSink => ({
    begin(g) {
      running[k] = g;
      if (failed) g.stop();
      else sink.begin?.(g);
    },
    event(ev) {
      if (failed) return STOP;
      if (ev.kind === 'end') {
        total.promptTokens += ev.usage.promptTokens;
        total.completionTokens += ev.usage.completionTokens;
        total.cachedTokens += ev.usage.cachedTokens;
        return ++ended === count ? sink.event({ kind: 'end', usage: total }) : undefined;
      }
      // A text event's usage is read on demand, as of that event: take it now (a spread would not copy it).
      const out: ParsedEvent = ev.kind === 'text' ? { kind: 'text', index: k * n + ev.index, text: ev.text, tokenIds: ev.tokenIds, usage: ev.usage } : { ...ev, index: k * n + ev.index };
      return sink.event(out);
    },
  });
  const runs = Array.from({ length: count }, (_, k) =>
    run(k, part(k)).catch((err: unknown) => {
      if (!failed) {
        failed = true;
        failure = err;
        for (const g of running) g?.stop();
      }
    }),
  );
  await Promise.all(runs);
  if (failed) throw failure;
}
