// The message of rate-limit sync (./limit-sync.ts), and its decoding. Anything can be
// published on a subject, so a message is validated whole before any of it is used.

/**
 * One key's row: its id between replicas (a digest of the key, '*' for the shared
 * budget), the requests and tokens the sender spent from it since its previous message,
 * and the sender's generations in flight for it now.
 */
export type UsageRow = [id: string, requests: number, tokens: number, inflight: number];

export interface UsageMessage {
  replica: string;
  /** Increases with every message the replica sends (an older or repeated one is ignored). */
  seq: number;
  keys: UsageRow[];
}

/** Far above any real figure in one message, and exact in an Int32. */
const MAX = 2 ** 30;

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < MAX;

export function encodeUsage(m: UsageMessage): string {
  return JSON.stringify(m);
}

/** A usage message, or null when any part of it is malformed. */
export function decodeUsage(data: Uint8Array): UsageMessage | null {
  let m: unknown;
  try {
    m = JSON.parse(Buffer.from(data).toString());
  } catch {
    return null;
  }
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return null;
  const o = m as Record<string, unknown>;
  if (typeof o.replica !== 'string' || !Number.isSafeInteger(o.seq) || (o.seq as number) < 1 || !Array.isArray(o.keys)) return null;
  const ids = new Set<string>();
  for (const row of o.keys as unknown[]) {
    if (!Array.isArray(row) || row.length !== 4 || typeof row[0] !== 'string' || !isCount(row[1]) || !isCount(row[2]) || !isCount(row[3])) return null;
    if (ids.has(row[0])) return null;
    ids.add(row[0]);
  }
  return { replica: o.replica, seq: o.seq as number, keys: o.keys as UsageRow[] };
}
