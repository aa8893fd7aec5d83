// The `rate-limits` configuration: what each API key may spend, and the default for keys
// without their own. Read from --config (or --rate-limits JSON) at start and again on
// SIGHUP; a bad value is an error that names the entry and the field, and a reload with
// one keeps the limits in force.
//
//   "rate-limits": [
//     { "key": "*",      "requests-per-minute": 60,  "tokens-per-minute": 100000, "concurrent-requests": 8 },
//     { "key": "sk-big", "requests-per-minute": 600, "tokens-per-minute": 2000000 }
//   ],
//   "rate-limit-window-secs": 60
//
// "*" is the default: every --api-key without an entry of its own gets these limits, in a
// budget of its own; requests with no key, or a key that is neither listed nor an
// --api-key (possible only without --api-key), share one budget with these limits. A
// limit left out, or 0, is no limit of that kind. Without "*", a key without an entry is
// not limited.

import type { SlotLimits } from './budget-table.js';

export const DEFAULT_KEY = '*';

export interface KeyLimitsEntry extends SlotLimits {
  key: string;
}

export interface LimitsConfig {
  /** The "minute" of the per-minute limits, in ms (60 000 unless configured). */
  windowMs: number;
  /** Entries in configuration order; keys are unique. */
  entries: KeyLimitsEntry[];
}

const FIELDS: Record<string, keyof SlotLimits> = {
  'requests-per-minute': 'requests',
  'tokens-per-minute': 'tokens',
  'concurrent-requests': 'concurrent',
};

/** The limits of `raw` (the `rate-limits` array), or an Error naming what is wrong. */
export function parseLimits(raw: readonly Record<string, unknown>[], windowSecs: number): LimitsConfig {
  if (!Number.isFinite(windowSecs) || windowSecs <= 0) throw new Error(`rate-limit-window-secs must be a number > 0, got ${String(windowSecs)}`);
  const seen = new Set<string>();
  const entries: KeyLimitsEntry[] = [];
  raw.forEach((e, i) => {
    const where = `rate-limits[${i}]`;
    if (typeof e.key !== 'string' || e.key === '') throw new Error(`${where}: "key" must be a non-empty string (an API key, or "*" for the default)`);
    // Never echo a key: an error message ends up in logs.
    const name = e.key === DEFAULT_KEY ? '"*"' : `the key of ${where}`;
    if (seen.has(e.key)) throw new Error(`${where}: ${name} is listed twice`);
    seen.add(e.key);
    const out: KeyLimitsEntry = { key: e.key, requests: 0, tokens: 0, concurrent: 0 };
    for (const [k, v] of Object.entries(e)) {
      if (k === 'key') continue;
      const field = FIELDS[k];
      if (!field) throw new Error(`${where}: unknown field "${k}" (known: key, ${Object.keys(FIELDS).join(', ')})`);
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 2 ** 31 - 1) throw new Error(`${where}: "${k}" must be an integer from 0 to ${2 ** 31 - 1}, got ${JSON.stringify(v)}`);
      out[field] = v;
    }
    entries.push(out);
  });
  return { windowMs: windowSecs * 1000, entries };
}
