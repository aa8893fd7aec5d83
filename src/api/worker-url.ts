// The worker URLs the admin API accepts, in one canonical form, so that the same worker
// spelled twice (GRPC://Host:050051/ and grpc://host:50051) is one worker, and so that
// nothing secret is ever stored, listed, logged or exported as a metric label: a URL with
// credentials is refused, and no error message repeats the URL it refuses.
//
//   scheme    grpc, grpcs (SGLang scheduler protocol), vllm+grpc, vllm+grpcs (vLLM); any case
//   host      a DNS name, an IPv4 address or a bracketed IPv6 address; lower-cased, and
//             IP addresses in their canonical form (WHATWG host parsing: 127.1 is 127.0.0.1,
//             [0:0::1] is [::1])
//   port      required (gRPC has no default port), 1-65535, leading zeros dropped
//   the rest  at most a trailing "/": no user:password@, path, query or fragment
//
// Canonical form: scheme://host:port

import { ApiError } from '../protocol/errors.js';

const SCHEMES = new Set(['grpc', 'grpcs', 'vllm+grpc', 'vllm+grpcs']);
const SHAPE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(\/?)$/;
const AUTHORITY = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]{1,10})$/;
const HINT = 'grpc://HOST:PORT or vllm+grpc://HOST:PORT';

/** The canonical form of a worker URL given to the admin API; a 400 naming what is wrong (never echoing the URL) otherwise. */
export function canonicalWorkerUrl(raw: string): string {
  const bad = (why: string) => ApiError.badRequest(`\`url\` ${why}: expected ${HINT}`, 'url', 'invalid_worker_url');
  if (raw.length > 2048) throw bad('is too long');
  // Control characters and spaces first: WHATWG parsing would strip some of them silently.
  if (/[\x00-\x20\x7f]/.test(raw)) throw bad('contains spaces or control characters');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw)?.[1]?.toLowerCase();
  if (scheme === undefined || !raw.startsWith('//', scheme.length + 1)) throw bad('is not an absolute URL');
  if (!SCHEMES.has(scheme)) throw bad(`has the scheme ${JSON.stringify(scheme.slice(0, 32))}, which is not a gRPC worker's`);
  const m = SHAPE.exec(raw);
  if (!m) throw bad('has a path, query or fragment');
  const authority = m[2];
  if (authority.includes('@')) throw bad('must not contain credentials (user:password@)');
  const a = AUTHORITY.exec(authority);
  if (!a) throw bad(authority.includes(':') ? 'has an invalid host or port' : 'has no port');
  const port = Number(a[2]);
  if (port < 1 || port > 65535) throw bad('has a port outside 1-65535');
  let host: string;
  try {
    // The special scheme http:// gives host parsing with IPv4/IPv6 canonicalisation and lower-casing.
    host = new URL(`http://${a[1]}`).hostname;
  } catch {
    throw bad('has an invalid host');
  }
  if (host === '') throw bad('has no host');
  return `${scheme}://${host}:${port}`;
}

/** A URL already in a pool (perhaps from --worker, not canonicalised) in the same form, when it has one. */
export function comparableWorkerUrl(url: string): string {
  try {
    return canonicalWorkerUrl(url);
  } catch {
    return url;
  }
}

/** A URL for display: any user:password@ cut out (workers from --worker are not validated here). */
export function withoutCredentials(url: string): string {
  return url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#]*@/, '$1');
}
