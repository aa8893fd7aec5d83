// The frontend's configuration as a custom chat processor's provider receives it first
// (spec 002: "the parsed Frontend configuration"): every `portico serve` option as it
// resolved (flag, PORTICO_* environment, --config file, default), keyed by flag name as
// the config file is, with the secrets left out so that a processor (third-party code
// that may log what it is given) never holds them:
//
//   - options marked `secret` in the table (the API keys) are absent;
//   - credentials inside URLs (user:password@, and password/token query parameters, as
//     a postgres:// --responses-store or a nats:// --event-plane may carry) are cut out;
//   - `chat-processor-config` is absent: it is the provider's second argument.

import type { OptionSpec, OptionValue } from './options.js';

/** A URL's user:password@ (wherever the URL starts: NAME=URL, several comma-separated URLs). */
const USERINFO = /([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#]*@/g;
/** A credential passed as a query parameter (libpq's password=, a token=, …): its value. */
const CREDENTIAL_PARAM = /([?&](?:password|passwd|pass|sslpassword|token|auth_token|secret|api[_-]?key)=)[^&#\s,]*/gi;

function scrub(s: string): string {
  return s.replace(USERINFO, '$1').replace(CREDENTIAL_PARAM, '$1');
}

function scrubValue(v: unknown): unknown {
  if (typeof v === 'string') return scrub(v);
  if (Array.isArray(v)) return v.map(scrubValue);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrubValue(x)]));
  return v;
}

/**
 * The provider's `config`: `values` (resolveOptions' answer) without secrets, with
 * `resolved` overriding the options the CLI finishes resolving itself (a default that
 * depends on the machine, an alias read from Dynamo's environment names).
 */
export function frontendConfig(specs: readonly OptionSpec[], values: Record<string, OptionValue>, resolved: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of specs) {
    if (s.secret || s.name === 'chat-processor-config') continue;
    const v = s.name in resolved ? resolved[s.name] : values[s.name];
    if (v !== undefined) out[s.name] = scrubValue(v);
  }
  return out;
}
