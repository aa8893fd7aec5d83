// Admission: what the frontend does with request fields it does not support.
// By default they are rejected with a 400 naming each one; operators may choose to
// drop them instead (PORTICO_IGNORE_UNSUPPORTED_FIELDS=1, or Dynamo's
// DYN_IGNORE_OPENAI_FE_UNSUPPORTED_FIELDS=1).

import { ApiError } from './errors.js';

function truthy(v: string | undefined): boolean {
  return v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());
}

export function ignoreUnsupportedFields(env: NodeJS.ProcessEnv = process.env): boolean {
  return truthy(env.PORTICO_IGNORE_UNSUPPORTED_FIELDS) || truthy(env.DYN_IGNORE_OPENAI_FE_UNSUPPORTED_FIELDS);
}

/** Reject (or, when configured, ignore) the unknown fields found at one object level. */
export function admit(unknown: readonly string[], path: string, ignore: boolean): void {
  if (unknown.length === 0 || ignore) return;
  const names = unknown.map((n) => `\`${path ? `${path}.${n}` : n}\``).join(', ');
  throw ApiError.badRequest(`Unsupported parameter(s): ${names}`, path ? `${path}.${unknown[0]}` : unknown[0], 'unsupported_parameter');
}
