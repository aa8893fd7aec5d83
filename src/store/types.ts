// The Responses store: what a stored response is, and the interface its backends
// (sqlite.ts, postgres.ts) implement. A row belongs to one tenant (the API key it was
// created with, '' when the server has no keys) and one model; every read names the tenant,
// so one key never reaches another key's responses.

/** One stored response: its own input items (ids assigned) and the response object as returned. */
export interface StoredResponse {
  id: string;
  tenant: string;
  model: string;
  previousId: string | null;
  /** When it was stored (ms since the epoch): what the TTL and max-rows policy count from. */
  storedAt: number;
  /** The input items of this request alone (not its chain's). */
  input: unknown[];
  /** The response object (its `output` are the output items). */
  response: { output: unknown[] } & Record<string, unknown>;
}

/** What a chain lookup found. */
export type Chain =
  | { kind: 'found'; responses: StoredResponse[] }
  | { kind: 'missing' }
  /** The named response exists but an ancestor of it was deleted or expired. */
  | { kind: 'broken'; missingId: string };

/** How long rows live and how many are kept (0: no limit). */
export interface StorePolicy {
  ttlMs: number;
  maxRows: number;
  /** The clock (ms since the epoch); Date.now unless a test moves time. */
  now?: () => number;
}

export interface ResponseStore {
  /** The backend's name for logs and docs ('sqlite', 'postgres'). */
  readonly kind: string;
  /** Stores a response; resolves once the write is durable (committed and synced). */
  put(r: StoredResponse): Promise<void>;
  /** The tenant's response, or null (unknown, another tenant's, deleted or expired). */
  get(tenant: string, id: string): Promise<StoredResponse | null>;
  /** The response and its ancestors, oldest first, within one tenant and model. */
  chain(tenant: string, model: string, id: string): Promise<Chain>;
  /** Deletes the tenant's response; false when there was none. */
  delete(tenant: string, id: string): Promise<boolean>;
  close(): Promise<void>;
}

/** A chain longer than this is refused (a guard against a runaway walk). */
export const MAX_CHAIN = 10_000;
