// What a worker's discovery key holds. Each worker is one key under
// `<namespace>/workers/`, named by its lease (so two registrations never collide) and
// held by that lease: when the registrant stops renewing it, etcd deletes the key and
// every watching frontend drops the worker.

export interface WorkerRecord {
  /** The model name the worker serves (clients' "model"). */
  model: string;
  /** grpc://HOST:PORT (SGLang) or vllm+grpc://HOST:PORT (vLLM). */
  url: string;
  protocol: 'sglang' | 'vllm';
  /** Data-parallel ranks (1 when not told). */
  dp_size: number;
  /** KV block size in tokens (0 = not told). */
  block_size: number;
  /** Its part in disaggregated serving; absent in records written before roles: aggregated. */
  role: 'aggregated' | 'prefill' | 'decode';
}

const ROLES = ['aggregated', 'prefill', 'decode'] as const;

export function workersPrefix(namespace: string): string {
  return `${namespace}/workers/`;
}

export function workerKey(namespace: string, leaseId: string): string {
  return `${workersPrefix(namespace)}${leaseId}`;
}

export function protocolOf(url: string): 'sglang' | 'vllm' {
  return /^vllm\+/i.test(url) ? 'vllm' : 'sglang';
}

export function newRecord(model: string, url: string, o: { dpSize?: number; blockSize?: number; role?: WorkerRecord['role'] } = {}): WorkerRecord {
  return { model, url, protocol: protocolOf(url), dp_size: o.dpSize ?? 1, block_size: o.blockSize ?? 0, role: o.role ?? 'aggregated' };
}

/** A key's value, checked; a reason string when it is not a worker record. */
export function parseRecord(value: string): WorkerRecord | string {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return 'not JSON';
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not a JSON object';
  const r = v as Record<string, unknown>;
  if (typeof r.model !== 'string' || r.model === '') return '`model` is not a non-empty string';
  if (typeof r.url !== 'string' || r.url === '') return '`url` is not a non-empty string';
  const dp = r.dp_size ?? 1;
  const bs = r.block_size ?? 0;
  if (typeof dp !== 'number' || !Number.isInteger(dp) || dp < 1) return '`dp_size` is not a positive integer';
  if (typeof bs !== 'number' || !Number.isInteger(bs) || bs < 0) return '`block_size` is not a non-negative integer';
  const role = r.role ?? 'aggregated';
  if (!(ROLES as readonly unknown[]).includes(role)) return `\`role\` is not one of ${ROLES.join(', ')}`;
  return { model: r.model, url: r.url, protocol: protocolOf(r.url), dp_size: dp, block_size: bs, role: role as WorkerRecord['role'] };
}
