// What a lone request's timers cost: three Node timers (the first-response deadline, the engine
// connection's keep-alive and idle timers), each alone at its duration, armed and cleared, as
// every request did before; against one add and cancel of FixedDeadlines (src/engine/deadlines.ts),
// what the request does now (the connection's timers stay armed across requests).
//   npm run build:ts && node dist/bench/timers.bench.js
// benchmark.js, one process; a loop runs hot, so a cold lone request pays more than this.
import Benchmark from 'benchmark';

import { FixedDeadlines } from '../src/engine/deadlines.js';

const noop = (): void => undefined;
const deadlines = new FixedDeadlines<number>(300_000, noop);

new Benchmark.Suite()
  .add('three Node timers, each alone at its duration, armed and cleared', () => {
    const first = setTimeout(noop, 300_000);
    first.unref();
    const keepAlive = setTimeout(noop, 10_000);
    keepAlive.unref();
    clearTimeout(first);
    const idle = setTimeout(noop, 900_000);
    idle.unref();
    clearTimeout(keepAlive);
    clearTimeout(idle);
  })
  .add('one FixedDeadlines add and cancel', () => {
    deadlines.cancel(deadlines.add(1));
  })
  .on('cycle', (e: Benchmark.Event) => console.log(`${String(e.target)}  (${(1e9 / (e.target.hz ?? 1)).toFixed(0)} ns per op)`))
  .run();
