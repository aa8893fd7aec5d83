// The rate-limit headers of a response, in the shape of the API family a client speaks,
// on success and on a 429 alike (the hosted APIs send them on every response, and their
// SDKs read them to pace retries):
//
//   OpenAI (and KServe metadata)  x-ratelimit-limit-requests      60
//                                 x-ratelimit-remaining-requests  59
//                                 x-ratelimit-reset-requests      1s      (until the bucket is full: Go duration)
//                                 x-ratelimit-{limit,remaining,reset}-tokens
//   Anthropic                     anthropic-ratelimit-requests-limit      60
//                                 anthropic-ratelimit-requests-remaining  59
//                                 anthropic-ratelimit-requests-reset      2026-01-01T00:00:01Z  (RFC 3339)
//                                 anthropic-ratelimit-tokens-{limit,remaining,reset}
//   a refusal, besides            retry-after (whole seconds, from the ApiError) and
//                                 retry-after-ms (exact; both SDKs prefer it); a prompt
//                                 larger than the whole tokens limit: x-should-retry: false
//
// A kind of limit the key does not have is left out. Portico limits input and output
// tokens together, so Anthropic's separate input-tokens / output-tokens headers are not sent.

import type { Admission } from '../limits/budget-table.js';

export type RateLimitStyle = 'openai' | 'anthropic';

export interface HeaderTarget {
  addResponseHeader?(name: string, value: string): void;
}

export function writeRateLimitHeaders(style: RateLimitStyle, a: Admission, to: HeaderTarget, nowMs: number): void {
  const add = to.addResponseHeader;
  if (!add) return;
  const r = a.requests;
  const t = a.tokens;
  if (style === 'anthropic') {
    if (r.limit > 0) {
      add.call(to, 'anthropic-ratelimit-requests-limit', String(r.limit));
      add.call(to, 'anthropic-ratelimit-requests-remaining', String(r.remaining));
      add.call(to, 'anthropic-ratelimit-requests-reset', rfc3339(nowMs + r.resetMs));
    }
    if (t.limit > 0) {
      add.call(to, 'anthropic-ratelimit-tokens-limit', String(t.limit));
      add.call(to, 'anthropic-ratelimit-tokens-remaining', String(t.remaining));
      add.call(to, 'anthropic-ratelimit-tokens-reset', rfc3339(nowMs + t.resetMs));
    }
  } else {
    if (r.limit > 0) {
      add.call(to, 'x-ratelimit-limit-requests', String(r.limit));
      add.call(to, 'x-ratelimit-remaining-requests', String(r.remaining));
      add.call(to, 'x-ratelimit-reset-requests', goDuration(r.resetMs));
    }
    if (t.limit > 0) {
      add.call(to, 'x-ratelimit-limit-tokens', String(t.limit));
      add.call(to, 'x-ratelimit-remaining-tokens', String(t.remaining));
      add.call(to, 'x-ratelimit-reset-tokens', goDuration(t.resetMs));
    }
  }
  if (a.refused !== null && a.retryAfterMs > 0) add.call(to, 'retry-after-ms', String(Math.ceil(a.retryAfterMs)));
  // A prompt larger than the whole tokens limit: no wait helps (both SDKs obey this header).
  if (a.refused === 'too_large') add.call(to, 'x-should-retry', 'false');
}

/**
 * A duration as OpenAI writes it (Go's time.Duration format, to the millisecond): "0s",
 * "120ms", "6s", "1.5s", "1m0s", "1h2m3.5s".
 */
export function goDuration(ms: number): string {
  const total = Math.ceil(ms);
  if (total <= 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = (total % 60_000) / 1000;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** RFC 3339 in UTC, to the second (rounded up: the bucket is full by then). */
export function rfc3339(ms: number): string {
  return new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
