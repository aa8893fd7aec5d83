// What per-key rate limits cost the request loop, in-process: runGeneration over an engine
// client that answers at once (one token, then done), with no limits (`off`: the request
// carries no ticket, as when none is configured) and with a key limited on requests, tokens
// and concurrent requests (`on`: admission, the rate-limit headers written to a response,
// one charge per engine message, the release; limits high enough that nothing is refused).
// CPU per request from process.cpuUsage. Either each setting in its own process (V8's state
// after one mode biases the other), alternating:
//
//   npm run build:ts && for i in 1 2 3 4 5 6; do for m in off on; do node dist/bench/rate-limit-cost.bench.js $m 100000; done; done
//
// or both in one process (`ab`), in alternating blocks of 10,000 requests, so that both see the
// same machine (a shared host's load moves the separate-process figures by 2x): the same-run
// ratio of CPU per request, on against off.
//
//   npm run build:ts && for i in 1 2 3; do node dist/bench/rate-limit-cost.bench.js ab 20; done

import { generationRequest } from '../src/pipeline/request.js';
import { runGeneration } from '../src/pipeline/run.js';
import { ticketFor } from '../src/pipeline/rate-limit.js';
import { BudgetTable } from '../src/limits/budget-table.js';
import { assignSlots, RateLimits } from '../src/limits/key-limits.js';
import { parseLimits } from '../src/limits/limits-config.js';
import type { Cancellation } from '../src/engine/types.js';
import { oneTokenModel } from './one-token-model.js';

const mode = process.argv[2] ?? 'on';
if (mode !== 'on' && mode !== 'off' && mode !== 'ab') throw new Error('usage: rate-limit-cost.bench.js on|off [requests] | ab [blocks]');
const model = oneTokenModel();
const limits = new RateLimits(new BudgetTable());
limits.apply(assignSlots(null, parseLimits(mode !== 'off' ? [{ key: 'sk-bench', 'requests-per-minute': 2 ** 31 - 1, 'tokens-per-minute': 2 ** 31 - 1, 'concurrent-requests': 1000 }] : [], 60), ['sk-bench']));
/** Where the HTTP face writes the headers (UwsExchange.addResponseHeader keeps them in a list). */
let headers: [string, string][] = [];
const target = { addResponseHeader: (n: string, v: string) => void headers.push([n, v]) };
const prompt = Uint32Array.from({ length: 20 }, (_, i) => 500 + i);
const never: Cancellation = { aborted: false, addEventListener() {}, removeEventListener() {} };
const one = (i: number) => {
  headers = [];
  // As the HTTP server does per generation route: a ticket only when limits are active.
  const limit = limits.active ? ticketFor(limits, 'sk-bench', 'openai', target) : null;
  return runGeneration(generationRequest({ model, promptIds: prompt, sampling: { n: 1, maxTokens: 1 }, maxTokens: 1, requestId: `r${i}`, signal: never, route: {}, arrived: performance.now(), skipSpecialTokens: true, limit }), { event() {} });
};
for (let i = 0; i < 3000; i++) await one(i);
if (mode !== 'off' && headers.length !== 6) throw new Error(`expected 6 rate-limit headers, got ${headers.length}`);
if (mode === 'ab') {
  const blocks = Number(process.argv[3] ?? 20);
  const B = 10_000;
  const cpu = { on: 0, off: 0 };
  for (let b = 0; b < blocks; b++) {
    const on = b % 2 === 0;
    // The switch a reload flips: with it off, a request carries no ticket.
    limits.active = on;
    const t = process.cpuUsage();
    for (let i = 0; i < B; i++) await one(i);
    const u = process.cpuUsage(t);
    cpu[on ? 'on' : 'off'] += u.user + u.system;
  }
  const per = (us: number) => us / ((blocks / 2) * B);
  console.log(`rate limits ab: on ${per(cpu.on).toFixed(2)} µs, off ${per(cpu.off).toFixed(2)} µs CPU per 1-token request; on/off ${(cpu.on / cpu.off).toFixed(3)}`);
} else {
  const N = Number(process.argv[3] ?? 100000);
  const t = process.cpuUsage();
  for (let i = 0; i < N; i++) await one(i);
  const u = process.cpuUsage(t);
  console.log(`rate limits ${mode}: ${((u.user + u.system) / N).toFixed(2)} µs CPU per 1-token request`);
}
