// The prefill side of the mock's KV hand-over: what a prefill worker holds for decode
// workers to take, and the side-channel server they take it from (SGLang's bootstrap
// server, NIXL's side channel: one plain HTTP server on the bootstrap port).
//
//   GET /kv/<key>?wait_ms=N   key: room/<bootstrap_room> (SGLang), request/<remote_request_id>
//                             (vLLM NIXL) or transfer/<transfer_id> (vLLM Mooncake), ids
//                             URL-encoded. Long-polls up to N ms for the key:
//     200 application/json    the prompt's KV (KvPayload); the entry is taken (handed over once)
//     404 {"error"}           nothing under the key within N ms (the caller polls again or gives up)
//     410 {"error"}           the prefill leg failed or was aborted: the KV will never come
//   GET /health               200
//
// An entry lives until it is taken or for the hold time (the rendezvous bound), whichever
// comes first; a failure marker lives as long, so a decode that arrives late still hears
// of it. A poller that hangs up stops waiting at once.

import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a decode worker receives: the prompt whose KV it now holds, in the prefill's blocks. */
export interface KvPayload {
  /** The prompt's token ids (the decode leg checks them against its own). */
  tokenIds: number[];
  /** The prefill worker's block size and chained hashes of the prompt's full blocks. */
  blockSize: number;
  blockHashes: number[];
}

type Entry =
  | { state: 'ready'; payload: KvPayload; timer: NodeJS.Timeout; taken: (ok: boolean) => void; release: () => void }
  | { state: 'failed'; reason: string; timer: NodeJS.Timeout };

export type TakeResult = { kind: 'ok'; payload: KvPayload } | { kind: 'failed'; reason: string } | { kind: 'timeout' };

interface Waiter {
  done(r: TakeResult): void;
}

/**
 * Keys → held KV. Emits 'waiting' (key) and 'released' (key, why: 'answered' | 'timeout' |
 * 'left') as pollers start and stop waiting, and 'held' / 'freed' (key) as entries come
 * and go, for tests to wait on.
 */
export class KvRendezvousStore extends EventEmitter {
  private readonly entries = new Map<string, Entry>();
  private readonly waiters = new Map<string, Set<Waiter>>();

  constructor(readonly holdMs: number) {
    super();
  }

  /** Entries held (KV not yet taken), failure markers excluded. */
  held(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.state === 'ready') n++;
    return n;
  }

  /** Pollers waiting. */
  waiting(): number {
    let n = 0;
    for (const s of this.waiters.values()) n += s.size;
    return n;
  }

  has(key: string): boolean {
    return this.entries.get(key)?.state === 'ready';
  }

  /**
   * Hold `payload` under `key` until a decode takes it; `release` (the KV blocks held for
   * it) runs when it is taken or freed, before 'freed' is emitted. Resolves true when
   * taken, false when the hold time ran out, the key was freed or failed first.
   */
  publish(key: string, payload: KvPayload, release: () => void = () => {}): Promise<boolean> {
    this.drop(key);
    return new Promise<boolean>((resolve) => {
      const w = this.waiters.get(key);
      const first = w?.values().next().value as Waiter | undefined;
      if (first) {
        // A decode is already waiting: hand it over at once.
        this.unwait(key, first, 'answered');
        release();
        first.done({ kind: 'ok', payload });
        resolve(true);
        return;
      }
      const timer = setTimeout(() => this.drop(key), this.holdMs);
      timer.unref();
      this.entries.set(key, { state: 'ready', payload, timer, taken: resolve, release });
      this.emit('held', key);
    });
  }

  /** The KV under `key` will never come (the prefill leg failed or was aborted): tell its pollers. */
  fail(key: string, reason: string): void {
    this.drop(key);
    const timer = setTimeout(() => this.drop(key), this.holdMs);
    timer.unref();
    this.entries.set(key, { state: 'failed', reason, timer });
    for (const w of [...(this.waiters.get(key) ?? [])]) {
      this.unwait(key, w, 'answered');
      w.done({ kind: 'failed', reason });
    }
  }

  /** Forget `key` (its held KV is freed); an unanswered publish() resolves false. */
  drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    clearTimeout(e.timer);
    this.entries.delete(key);
    if (e.state === 'ready') {
      e.release();
      e.taken(false);
      this.emit('freed', key);
    }
  }

  /** Wait up to `waitMs` for `key`; the returned function stops waiting (the poller left). */
  take(key: string, waitMs: number, done: (r: TakeResult) => void): () => void {
    const e = this.entries.get(key);
    if (e?.state === 'ready') {
      clearTimeout(e.timer);
      this.entries.delete(key);
      e.release();
      e.taken(true);
      this.emit('freed', key);
      done({ kind: 'ok', payload: e.payload });
      return () => {};
    }
    if (e?.state === 'failed') {
      done({ kind: 'failed', reason: e.reason });
      return () => {};
    }
    let timer: NodeJS.Timeout | undefined;
    const w: Waiter = {
      done: (r) => {
        clearTimeout(timer);
        done(r);
      },
    };
    timer = setTimeout(() => {
      this.unwait(key, w, 'timeout');
      w.done({ kind: 'timeout' });
    }, Math.max(0, waitMs));
    let set = this.waiters.get(key);
    if (!set) this.waiters.set(key, (set = new Set()));
    set.add(w);
    this.emit('waiting', key);
    return () => {
      if (this.unwait(key, w, 'left')) clearTimeout(timer);
    };
  }

  close(): void {
    for (const key of [...this.entries.keys()]) this.drop(key);
    for (const [key, set] of [...this.waiters]) {
      for (const w of [...set]) {
        this.unwait(key, w, 'answered');
        w.done({ kind: 'failed', reason: 'prefill worker shutting down' });
      }
    }
  }

  private unwait(key: string, w: Waiter, why: 'answered' | 'timeout' | 'left'): boolean {
    const set = this.waiters.get(key);
    if (!set?.delete(w)) return false;
    if (set.size === 0) this.waiters.delete(key);
    this.emit('released', key, why);
    return true;
  }
}

/** SGLang's key for a bootstrap room, vLLM's for a NIXL remote request id and a Mooncake transfer id. */
export const roomKey = (room: number) => `room/${room}`;
export const requestKey = (id: string) => `request/${encodeURIComponent(id)}`;
export const transferKey = (id: string) => `transfer/${encodeURIComponent(id)}`;

/** The mock's bootstrap / side-channel server over `store`. */
export class KvRendezvousServer {
  private readonly server: http.Server;
  port = 0;

  constructor(readonly store: KvRendezvousStore) {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 1000;
  }

  async listen(port: number, host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this.port;
  }

  close(): Promise<void> {
    this.store.close();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/health') return json(res, 200, { ok: true });
    const m = /^\/kv\/((?:room|request|transfer)\/[^/]+)$/.exec(url.pathname);
    if (req.method !== 'GET' || !m) return json(res, 404, { error: `no route ${req.method} ${url.pathname}` });
    const key = m[1]!;
    const waitMs = Math.min(Math.max(0, Number(url.searchParams.get('wait_ms') ?? 0) || 0), 600_000);
    let answered = false;
    const stop = this.store.take(key, waitMs, (r) => {
      answered = true;
      if (res.destroyed) return;
      if (r.kind === 'ok') json(res, 200, r.payload);
      else if (r.kind === 'failed') json(res, 410, { error: r.reason });
      else json(res, 404, { error: `nothing under ${key} within ${waitMs} ms` });
    });
    // The poller hung up (its request was cancelled): stop waiting for it.
    res.on('close', () => {
      if (!answered) stop();
    });
  }
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
