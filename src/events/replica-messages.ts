// The two messages of router replica sync (./replica-sync.ts), and their decoding. Anything
// can be published on a subject, so a message is validated whole before any of it is used:
// a load snapshot with one bad row is rejected entirely, since applying its good rows would
// replace the sender's last good snapshot with a part of one (adding or dropping load that
// the sender never had or never shed).

/** One worker's row of a load snapshot: its canonical URL, then requests, prefill tokens and decode blocks in flight. */
export type LoadRow = [url: string, requests: number, prefill: number, blocks: number];

/** A replica's whole load, per worker it has anything in flight on. */
export interface LoadSnapshot {
  replica: string;
  /** Increases with every snapshot the replica sends (an older one is ignored). */
  seq: number;
  workers: LoadRow[];
}

/** A routing decision: block keys dispatched to a worker's rank. */
export interface RouteMessage {
  replica: string;
  url: string;
  rank: number;
  keys: Float64Array;
}

/** Bound of a load figure: far above any real one, and small enough that sums stay exact in an Int32 table. */
const MAX_LOAD = 2 ** 30;

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < MAX_LOAD;

function json(data: Uint8Array): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(Buffer.from(data).toString());
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A load snapshot, or null when any part of it is malformed (a bad row, a worker named twice). */
export function decodeLoad(data: Uint8Array): LoadSnapshot | null {
  const m = json(data);
  if (!m || typeof m.replica !== 'string' || !Number.isSafeInteger(m.seq) || (m.seq as number) < 1 || !Array.isArray(m.workers)) return null;
  const urls = new Set<string>();
  for (const row of m.workers as unknown[]) {
    if (!Array.isArray(row) || row.length !== 4 || typeof row[0] !== 'string' || !isCount(row[1]) || !isCount(row[2]) || !isCount(row[3])) return null;
    if (urls.has(row[0])) return null;
    urls.add(row[0]);
  }
  return { replica: m.replica, seq: m.seq as number, workers: m.workers as LoadRow[] };
}

export function encodeLoad(s: LoadSnapshot): string {
  return JSON.stringify(s);
}

/** A routing decision, or null when malformed (keys that are not whole float64 block keys). */
export function decodeRoute(data: Uint8Array): RouteMessage | null {
  const m = json(data);
  if (!m || typeof m.replica !== 'string' || typeof m.url !== 'string' || !Number.isInteger(m.rank) || typeof m.keys !== 'string') return null;
  const bytes = Buffer.from(m.keys, 'base64');
  if (bytes.length % 8 !== 0) return null;
  const keys = new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  if (!keys.every((k) => Number.isInteger(k) && k >= 0 && k <= Number.MAX_SAFE_INTEGER)) return null;
  return { replica: m.replica, url: m.url, rank: m.rank as number, keys };
}

export function encodeRoute(replica: string, url: string, rank: number, keys: Float64Array): string {
  return JSON.stringify({ replica, url, rank, keys: Buffer.from(keys.buffer, keys.byteOffset, keys.byteLength).toString('base64') });
}
