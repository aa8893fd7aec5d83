// Shrinks a failing input while it still fails the same way: drops headers one at a time,
// then removes ever smaller chunks of the body (a bounded ddmin). Each try is a real
// request to the server, so the result is a reproducer, not a guess.

import { Connection, rawRequest } from './http-client.js';
import { check } from './oracle.js';
import type { Endpoint } from './seeds.js';

export interface Candidate {
  headers: [string, string][];
  body: Buffer;
}

/** The failure class without its free text (numbers and messages vary as the input shrinks). */
export function classKey(cls: string): string {
  const m = /^(5xx \d+|[^:]*)/.exec(cls);
  return m ? m[1] : cls;
}

export async function outcomeClass(port: number, ep: Endpoint, c: Candidate, timeoutMs: number): Promise<string> {
  const conn = new Connection(port);
  try {
    const o = await conn.send(rawRequest(ep.path, c.headers, c.body), timeoutMs);
    if (o.kind === 'timeout') return 'hang';
    if (o.kind === 'closed') return 'no response (connection closed)';
    if (o.kind === 'malformed') return `malformed response: ${o.why}`;
    return check(ep, o.reply);
  } catch (err) {
    return `connect failed: ${(err as Error).message}`;
  } finally {
    conn.close();
  }
}

export async function minimize(port: number, ep: Endpoint, start: Candidate, cls: string, timeoutMs: number, budget = 300): Promise<Candidate> {
  const key = classKey(cls);
  let best = start;
  let tries = 0;
  const fails = async (c: Candidate) => ++tries <= budget && classKey(await outcomeClass(port, ep, c, timeoutMs)) === key;
  for (let i = best.headers.length - 1; i >= 0; i--) {
    const c = { headers: best.headers.filter((_, j) => j !== i), body: best.body };
    if (await fails(c)) best = c;
  }
  for (let chunk = best.body.length >> 1; chunk >= 1 && tries < budget; chunk >>= 1) {
    for (let at = 0; at < best.body.length && tries < budget; ) {
      const body = Buffer.concat([best.body.subarray(0, at), best.body.subarray(at + chunk)]);
      const c = { headers: best.headers, body };
      if (await fails(c)) best = c;
      else at += chunk;
    }
  }
  return best;
}
