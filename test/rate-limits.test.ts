// Per-key rate limits without a server: the budget table's buckets on an injected clock
// (requests, tokens, concurrent requests, refill, a reload's rebase), the `rate-limits`
// configuration and its errors, slot assignment across reloads, the header formats, and
// one budget shared by threads (as the shards share it).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { BudgetTable, newAdmission, MAX_SLOTS, type SlotLimits } from '../src/limits/budget-table.js';
import { parseLimits } from '../src/limits/limits-config.js';
import { assignSlots, keyId, RateLimits } from '../src/limits/key-limits.js';
import { goDuration, rfc3339, writeRateLimitHeaders } from '../src/protocol/rate-limit-headers.js';
import { LimitTicket, requestKey, ticketFor } from '../src/pipeline/rate-limit.js';
import { ApiError } from '../src/protocol/errors.js';
import { rateLimitsOf } from '../src/cli/main.js';
import { resolveOptions, UsageError } from '../src/cli/options.js';
import { SERVE_OPTIONS } from '../src/cli/serve-options.js';
import { frontendConfig } from '../src/cli/frontend-config.js';

const WINDOW = 60_000;

function table(limits: SlotLimits[], clock: { t: number }): BudgetTable {
  const b = new BudgetTable(undefined, () => clock.t);
  b.setLimits(limits, WINDOW);
  return b;
}

test('requests per window: the limit is admitted, the next is refused with the wait until one request is back', () => {
  const clock = { t: 1_000_000 };
  const b = table([{ requests: 3, tokens: 0, concurrent: 0 }], clock);
  const a = newAdmission();
  for (let i = 0; i < 3; i++) {
    assert.equal(b.admit(0, 10, a).refused, null);
    assert.equal(a.requests.remaining, 2 - i);
    b.release(0);
  }
  assert.equal(b.admit(0, 10, a).refused, 'requests');
  assert.equal(a.retryAfterMs, WINDOW / 3);
  assert.equal(a.requests.remaining, 0);
  assert.equal(a.requests.resetMs, WINDOW);
  assert.equal(a.tokens.limit, 0, 'no tokens limit: none reported');
  // A third of the window later, one request is back (the bucket refills continuously).
  clock.t += WINDOW / 3;
  assert.equal(b.admit(0, 10, a).refused, null);
  assert.equal(b.admit(0, 10, a).refused, 'requests');
  // A whole window after the last admission, the bucket is full again (and no fuller).
  clock.t += 5 * WINDOW;
  b.state(0, a);
  assert.deepEqual(a.requests, { limit: 3, remaining: 3, resetMs: 0 });
});

test('tokens per window: prompts are charged at admission, output as generated; the level may go below zero', () => {
  const clock = { t: 5_000 };
  const b = table([{ requests: 0, tokens: 100, concurrent: 0 }], clock);
  const a = newAdmission();
  assert.equal(b.admit(0, 40, a).refused, null);
  assert.equal(a.tokens.remaining, 60);
  b.charge(0, 50);
  b.state(0, a);
  assert.equal(a.tokens.remaining, 10);
  // A prompt of 20 does not fit in the 10 left: refused, with the wait for the other 10.
  assert.equal(b.admit(0, 20, a).refused, 'tokens');
  assert.equal(a.retryAfterMs, (10 * WINDOW) / 100);
  // Output keeps counting past the limit: the level goes negative, and the wait grows.
  b.charge(0, 30);
  b.state(0, a);
  assert.equal(a.tokens.remaining, 0);
  assert.equal(b.admit(0, 20, a).refused, 'tokens');
  assert.equal(a.retryAfterMs, (40 * WINDOW) / 100);
  // A prompt larger than the whole limit can never fit: its own refusal.
  assert.equal(b.admit(0, 101, a).refused, 'too_large');
});

test('concurrent requests: a place is held until released, and a refusal takes nothing', () => {
  const clock = { t: 1 };
  const b = table([{ requests: 10, tokens: 0, concurrent: 2 }], clock);
  const a = newAdmission();
  assert.equal(b.admit(0, 1, a).refused, null);
  assert.equal(b.admit(0, 1, a).refused, null);
  assert.equal(b.admit(0, 1, a).refused, 'concurrent');
  assert.equal(b.inflight(0), 2);
  b.state(0, a);
  assert.equal(a.requests.remaining, 8, 'the refused request took no request from the bucket');
  b.release(0);
  assert.equal(b.admit(0, 1, a).refused, null);
  // Other replicas' requests in flight count too.
  b.release(0);
  b.release(0);
  b.setRemoteInflight(0, 2);
  assert.equal(b.admit(0, 1, a).refused, 'concurrent');
  b.setRemoteInflight(0, 1);
  assert.equal(b.admit(0, 1, a).refused, null);
});

test('a refusal on tokens gives back the concurrent place it took', () => {
  const clock = { t: 1 };
  const b = table([{ requests: 0, tokens: 10, concurrent: 1 }], clock);
  const a = newAdmission();
  b.charge(0, 10);
  assert.equal(b.admit(0, 5, a).refused, 'tokens');
  assert.equal(b.inflight(0), 0);
});

test('a reload keeps what a key spent: used 2 of 2, raised to 5, leaves 3; lowered, it can owe', () => {
  const clock = { t: 1_000 };
  const b = table([{ requests: 2, tokens: 0, concurrent: 0 }], clock);
  const a = newAdmission();
  b.admit(0, 0, a);
  b.admit(0, 0, a);
  assert.equal(b.admit(0, 0, a).refused, 'requests');
  const raised = { requests: 5, tokens: 0, concurrent: 0 };
  b.rebase(0, { requests: 2, tokens: 0, concurrent: 0 }, raised);
  b.setLimits([raised], WINDOW);
  b.state(0, a);
  assert.equal(a.requests.remaining, 3);
  const lowered = { requests: 1, tokens: 0, concurrent: 0 };
  b.rebase(0, raised, lowered);
  b.setLimits([lowered], WINDOW);
  assert.equal(b.admit(0, 0, a).refused, 'requests');
});

test('requests in flight are counted whatever the limit: a reload that sets or lifts one finds the true count', () => {
  const clock = { t: 1 };
  const none = { requests: 0, tokens: 0, concurrent: 0 };
  const two = { requests: 0, tokens: 0, concurrent: 2 };
  const b = table([none], clock);
  const a = newAdmission();
  b.admit(0, 1, a);
  b.admit(0, 1, a);
  b.setLimits([two], WINDOW);
  assert.equal(b.admit(0, 1, a).refused, 'concurrent', 'the two admitted before the limit hold its places');
  b.release(0);
  b.setLimits([none], WINDOW);
  b.release(0);
  b.setLimits([two], WINDOW);
  assert.equal(b.inflight(0), 0);
  assert.equal(b.admit(0, 1, a).refused, null);
  assert.equal(b.admit(0, 1, a).refused, null);
  assert.equal(b.admit(0, 1, a).refused, 'concurrent');
});

test('what other replicas spent is taken from the budget; what this process spent is handed over once', () => {
  const clock = { t: 1 };
  const b = table([{ requests: 10, tokens: 100, concurrent: 0 }], clock);
  const a = newAdmission();
  b.admit(0, 7, a);
  b.charge(0, 3);
  assert.deepEqual(b.takeUnsent(0), [1, 10]);
  assert.deepEqual(b.takeUnsent(0), [0, 0]);
  b.spendRemote(0, 4, 50);
  b.state(0, a);
  assert.equal(a.requests.remaining, 5);
  assert.equal(a.tokens.remaining, 40);
});

test('threads sharing the buffer draw on one budget: 4 threads racing for 1000 admit exactly 1000', async () => {
  const b = new BudgetTable();
  const limits = [{ requests: 1000, tokens: 0, concurrent: 0 }];
  b.setLimits(limits, 3_600_000);
  const src = `
    const { workerData, parentPort } = require('node:worker_threads');
    import(workerData.module).then(({ BudgetTable, newAdmission }) => {
      const b = new BudgetTable(workerData.buffer);
      b.setLimits(workerData.limits, 3600000);
      const a = newAdmission();
      let admitted = 0;
      for (let i = 0; i < 600; i++) if (b.admit(0, 0, a).refused === null) admitted++;
      parentPort.postMessage(admitted);
    });`;
  const module = new URL('../src/limits/budget-table.js', import.meta.url).href;
  const counts = await Promise.all(
    Array.from({ length: 4 }, () => {
      const w = new Worker(src, { eval: true, workerData: { buffer: b.buffer, limits, module } });
      return new Promise<number>((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      });
    }),
  );
  // Each thread alone would admit its 600: together they admit the one budget's 1000.
  assert.equal(counts.reduce((x, y) => x + y, 0), 1000);
});

test('rate-limits configuration: entries, defaults and the window', () => {
  const c = parseLimits([{ key: '*', 'requests-per-minute': 60 }, { key: 'sk-a', 'tokens-per-minute': 1000, 'concurrent-requests': 2 }], 30);
  assert.equal(c.windowMs, 30_000);
  assert.deepEqual(c.entries, [
    { key: '*', requests: 60, tokens: 0, concurrent: 0 },
    { key: 'sk-a', requests: 0, tokens: 1000, concurrent: 2 },
  ]);
});

test('rate-limits configuration: every bad value is an error naming the entry and field, never the key', () => {
  const bad: [Record<string, unknown>[], number, RegExp][] = [
    [[{ 'requests-per-minute': 1 }], 60, /rate-limits\[0\]: "key" must be a non-empty string/],
    [[{ key: '' }], 60, /rate-limits\[0\]: "key" must be a non-empty string/],
    [[{ key: 7 }], 60, /"key" must be a non-empty string/],
    [[{ key: 'sk-secret', 'requests-per-minute': -1 }], 60, /rate-limits\[0\]: "requests-per-minute" must be an integer from 0/],
    [[{ key: 'sk-secret', 'tokens-per-minute': 1.5 }], 60, /"tokens-per-minute" must be an integer/],
    [[{ key: 'sk-secret', 'concurrent-requests': '4' }], 60, /"concurrent-requests" must be an integer/],
    [[{ key: 'sk-secret', 'requests-per-minute': 2 ** 31 }], 60, /must be an integer from 0 to 2147483647/],
    [[{ key: 'sk-secret', 'requests-per-second': 1 }], 60, /rate-limits\[0\]: unknown field "requests-per-second"/],
    [[{ key: 'sk-secret' }, { key: 'sk-secret' }], 60, /rate-limits\[1\]: the key of rate-limits\[1\] is listed twice/],
    [[{ key: '*' }, { key: '*' }], 60, /rate-limits\[1\]: "\*" is listed twice/],
    [[], 0, /rate-limit-window-secs must be a number > 0/],
  ];
  for (const [raw, window, re] of bad) {
    assert.throws(() => parseLimits(raw, window), (err: Error) => re.test(err.message) && !err.message.includes('sk-secret'), JSON.stringify(raw));
  }
});

test('rate-limits from --config: a bad file value is a usage error; the option is a secret a processor never sees', async () => {
  const { writeFileSync, mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(`${tmpdir()}/portico-limits-`);
  const file = `${dir}/c.json`;
  writeFileSync(file, JSON.stringify({ 'rate-limits': [{ key: 'sk-a', 'requests-per-minute': 'many' }] }));
  assert.throws(() => rateLimitsOf(resolveOptions(SERVE_OPTIONS, ['--config', file], {}).values), (e: Error) => e instanceof UsageError && /"requests-per-minute" must be an integer/.test(e.message));
  writeFileSync(file, JSON.stringify({ 'rate-limits': { key: 'sk-a' } }));
  assert.throws(() => resolveOptions(SERVE_OPTIONS, ['--config', file], {}), /config 'rate-limits' must be an array of objects/);
  writeFileSync(file, JSON.stringify({ 'rate-limits': [{ key: 'sk-a', 'requests-per-minute': 5 }], 'rate-limit-window-secs': 0 }));
  assert.throws(() => resolveOptions(SERVE_OPTIONS, ['--config', file], {}), /config 'rate-limit-window-secs' must be a number > 0/);
  writeFileSync(file, JSON.stringify({ 'rate-limits': [{ key: 'sk-a', 'requests-per-minute': 5 }], 'rate-limit-window-secs': 2 }));
  const { values } = resolveOptions(SERVE_OPTIONS, ['--config', file], {});
  assert.deepEqual(rateLimitsOf(values), { windowMs: 2000, entries: [{ key: 'sk-a', requests: 5, tokens: 0, concurrent: 0 }] });
  assert.equal('rate-limits' in frontendConfig(SERVE_OPTIONS, values), false);
});

test('slots: listed keys and every --api-key (with the default) get their own, the rest share one; a reload keeps them', () => {
  const first = assignSlots(null, parseLimits([{ key: 'sk-a', 'requests-per-minute': 5 }, { key: '*', 'requests-per-minute': 2 }], 60), ['sk-a', 'sk-b']);
  const slots = new Map(first.keys);
  assert.equal(slots.size, 2);
  assert.deepEqual(first.limits[slots.get('sk-a')!], { requests: 5, tokens: 0, concurrent: 0 });
  assert.deepEqual(first.limits[slots.get('sk-b')!], { requests: 2, tokens: 0, concurrent: 0 });
  assert.ok(first.shared >= 0 && first.shared !== slots.get('sk-a') && first.shared !== slots.get('sk-b'));
  assert.equal(first.ids[first.shared], '*');
  assert.equal(first.ids[slots.get('sk-a')!], keyId('sk-a'));
  assert.ok(!first.ids.some((id) => id.includes('sk-')), 'no key on the wire');
  // Reload: sk-c added, sk-a removed, no default any more.
  const second = assignSlots(first, parseLimits([{ key: 'sk-c', 'concurrent-requests': 1 }, { key: 'sk-b', 'requests-per-minute': 9 }], 60), ['sk-a', 'sk-b']);
  const again = new Map(second.keys);
  assert.equal(again.get('sk-b'), slots.get('sk-b'));
  assert.equal(again.has('sk-a'), false);
  assert.ok(again.get('sk-c')! > Math.max(...first.limits.keys()));
  assert.deepEqual(second.limits[slots.get('sk-a')!], { requests: 0, tokens: 0, concurrent: 0 });
  assert.equal(second.shared, -1);
  const r = new RateLimits(new BudgetTable());
  r.apply(second);
  assert.equal(r.slotFor('sk-b'), slots.get('sk-b'));
  assert.equal(r.slotFor('sk-a'), -1, 'no entry and no default: not limited');
  assert.equal(r.slotFor(''), -1);
  r.apply(first);
  assert.equal(r.slotFor('someone-else'), first.shared);
  assert.equal(r.slotFor(''), first.shared);
});

test('slots: more keys than the table holds is an error', () => {
  const entries = Array.from({ length: MAX_SLOTS + 1 }, (_, i) => ({ key: `k${i}`, 'requests-per-minute': 1 }));
  assert.throws(() => assignSlots(null, parseLimits(entries, 60), []), new RegExp(`at most ${MAX_SLOTS} keys`));
});

test('no limits configured: no ticket, so the request path does nothing more', () => {
  const r = new RateLimits(new BudgetTable());
  r.apply(assignSlots(null, parseLimits([], 60), ['sk-a']));
  assert.equal(r.active, false);
  assert.equal(ticketFor(r, 'sk-a', 'openai', null), null);
  assert.equal(ticketFor(undefined, 'sk-a', 'openai', null), null);
});

test('the request key: Bearer first, then x-api-key', () => {
  const h = (m: Record<string, string>) => (n: string) => m[n] ?? '';
  assert.equal(requestKey(h({ authorization: 'Bearer sk-1' })), 'sk-1');
  assert.equal(requestKey(h({ authorization: 'bearer  sk-1 ' })), 'sk-1');
  assert.equal(requestKey(h({ 'x-api-key': 'sk-2' })), 'sk-2');
  assert.equal(requestKey(h({ authorization: 'Basic abc', 'x-api-key': 'sk-2' })), 'sk-2');
  assert.equal(requestKey(h({})), '');
});

test('durations as OpenAI writes them, times as Anthropic does', () => {
  assert.equal(goDuration(0), '0s');
  assert.equal(goDuration(0.2), '1ms');
  assert.equal(goDuration(120), '120ms');
  assert.equal(goDuration(6000), '6s');
  assert.equal(goDuration(1500), '1.5s');
  assert.equal(goDuration(60_000), '1m0s');
  assert.equal(goDuration(61_250), '1m1.25s');
  assert.equal(goDuration(3_723_500), '1h2m3.5s');
  assert.equal(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5, 1)), '2026-01-02T03:04:06Z');
  assert.equal(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5)), '2026-01-02T03:04:05Z');
});

test('headers: OpenAI and Anthropic shapes; a refusal adds retry-after-ms; a kind without a limit is left out', () => {
  const clock = { t: 10_000 };
  const b = table([{ requests: 2, tokens: 100, concurrent: 0 }], clock);
  const a = b.admit(0, 30, newAdmission());
  const got = (style: 'openai' | 'anthropic') => {
    const h: Record<string, string> = {};
    writeRateLimitHeaders(style, a, { addResponseHeader: (n, v) => (h[n] = v) }, Date.UTC(2026, 0, 1));
    return h;
  };
  assert.deepEqual(got('openai'), {
    'x-ratelimit-limit-requests': '2',
    'x-ratelimit-remaining-requests': '1',
    'x-ratelimit-reset-requests': '30s',
    'x-ratelimit-limit-tokens': '100',
    'x-ratelimit-remaining-tokens': '70',
    'x-ratelimit-reset-tokens': '18s',
  });
  assert.deepEqual(got('anthropic'), {
    'anthropic-ratelimit-requests-limit': '2',
    'anthropic-ratelimit-requests-remaining': '1',
    'anthropic-ratelimit-requests-reset': '2026-01-01T00:00:30Z',
    'anthropic-ratelimit-tokens-limit': '100',
    'anthropic-ratelimit-tokens-remaining': '70',
    'anthropic-ratelimit-tokens-reset': '2026-01-01T00:00:18Z',
  });
  b.admit(0, 30, a);
  assert.equal(b.admit(0, 30, a).refused, 'requests');
  assert.equal(got('openai')['retry-after-ms'], '30000');
  const only = table([{ requests: 0, tokens: 0, concurrent: 1 }], clock).admit(0, 1, newAdmission());
  const h: Record<string, string> = {};
  writeRateLimitHeaders('openai', only, { addResponseHeader: (n, v) => (h[n] = v) }, 0);
  assert.deepEqual(h, {});
});

test('a ticket refuses with a 429 rate_limit_exceeded whose headers went out first; a too-large prompt says not to retry', () => {
  const clock = { t: 10_000 };
  const b = table([{ requests: 1, tokens: 50, concurrent: 0 }], clock);
  const h: Record<string, string> = {};
  const t = new LimitTicket(b, 0, 'openai', { addResponseHeader: (n, v) => (h[n] = v) });
  t.admit(10);
  assert.equal(h['x-ratelimit-remaining-requests'], '0');
  assert.throws(
    () => t.admit(10),
    (e: unknown) => e instanceof ApiError && e.status === 429 && e.code === 'rate_limit_exceeded' && e.type === 'rate_limit_error' && e.retryAfter === 60 && /Rate limit reached for requests/.test(e.message),
  );
  assert.equal(h['retry-after-ms'], '60000');
  assert.throws(
    () => t.admit(51),
    (e: unknown) => e instanceof ApiError && e.status === 429 && e.retryAfter === undefined && /Request too large/.test(e.message),
  );
  assert.equal(h['x-should-retry'], 'false');
});

test('rate-limit sync messages: a malformed one is rejected whole', async () => {
  const { decodeUsage, encodeUsage } = await import('../src/events/limit-messages.js');
  const enc = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
  const good = { replica: 'r1', seq: 3, keys: [['*', 1, 20, 0], ['abc', 0, 5, 2]] };
  assert.deepEqual(decodeUsage(Buffer.from(encodeUsage(good as never))), good);
  const bad: unknown[] = [
    'not json',
    '[]',
    null,
    { replica: 'r1', seq: 0, keys: [] },
    { replica: 'r1', seq: 1.5, keys: [] },
    { replica: 7, seq: 1, keys: [] },
    { replica: 'r1', seq: 1, keys: {} },
    { replica: 'r1', seq: 1, keys: [['*', 1, 2]] },
    { replica: 'r1', seq: 1, keys: [['*', -1, 2, 0]] },
    { replica: 'r1', seq: 1, keys: [['*', 1, 2 ** 30, 0]] },
    { replica: 'r1', seq: 1, keys: [['*', 1, 2, 0.5]] },
    { replica: 'r1', seq: 1, keys: [[5, 1, 2, 0]] },
    { replica: 'r1', seq: 1, keys: [['*', 1, 2, 0], ['*', 1, 2, 0]] },
  ];
  for (const b of bad) assert.equal(decodeUsage(enc(b)), null, JSON.stringify(b));
});
