// The decode side of the mock's KV hand-over: take a request's prompt KV from the prefill
// worker's side channel (src/mock/kv-rendezvous.ts), long-polling until a deadline.

import http from 'node:http';

import type { KvPayload } from './kv-rendezvous.js';

export type FetchResult =
  | { kind: 'ok'; payload: KvPayload }
  /** The prefill leg failed or was aborted: its KV will never come. */
  | { kind: 'failed'; reason: string }
  /** Nothing came within the bound. */
  | { kind: 'timeout'; afterMs: number }
  /** The side channel cannot be reached (the prefill worker is down). */
  | { kind: 'unreachable'; reason: string }
  /** `signal` fired. */
  | { kind: 'cancelled' };

/** One long poll asks for at most this long, so a lost answer costs one poll, not the whole bound. */
const POLL_MS = 10_000;

/** Take `key` from http://host:port, waiting up to `timeoutMs` in all. */
export async function fetchKv(host: string, port: number, key: string, timeoutMs: number, signal: AbortSignal): Promise<FetchResult> {
  // A bootstrap host may come bracketed (an IPv6 address as a URL writes it).
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const start = performance.now();
  for (;;) {
    if (signal.aborted) return { kind: 'cancelled' };
    const left = timeoutMs - (performance.now() - start);
    if (left <= 0) return { kind: 'timeout', afterMs: timeoutMs };
    const r = await poll(host, port, key, Math.min(POLL_MS, Math.ceil(left)), signal);
    if (r.kind === 'ok' || r.kind === 'failed' || r.kind === 'unreachable' || r.kind === 'cancelled') return r;
  }
}

function poll(host: string, port: number, key: string, waitMs: number, signal: AbortSignal): Promise<FetchResult | { kind: 'again' }> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: `/kv/${key}?wait_ms=${waitMs}`, signal, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => resolve(signal.aborted ? { kind: 'cancelled' } : { kind: 'unreachable', reason: 'side channel closed mid-answer' }));
      res.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          resolve({ kind: 'unreachable', reason: `side channel answered ${res.statusCode} with a body that is not JSON` });
          return;
        }
        if (res.statusCode === 200) resolve({ kind: 'ok', payload: body as KvPayload });
        else if (res.statusCode === 410) resolve({ kind: 'failed', reason: String((body as { error?: unknown }).error ?? 'failed') });
        else if (res.statusCode === 404) resolve({ kind: 'again' });
        else resolve({ kind: 'unreachable', reason: `side channel answered ${res.statusCode}` });
      });
    });
    req.on('error', (err) => resolve(signal.aborted ? { kind: 'cancelled' } : { kind: 'unreachable', reason: err.message }));
  });
}
