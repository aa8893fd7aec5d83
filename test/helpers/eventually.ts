// Waiting for an event the test cannot subscribe to (a counter in another process, a
// metric, a socket state): poll until the condition holds. The bound is a hang guard only,
// far above any time the condition needs on a busy machine; a test that needs a condition
// to hold *by a time* is timing the machine, which belongs in bench/, not in a test.

/** Generous enough for a loaded 2-core CI machine; only reached when the behaviour is broken. */
export const HANG_GUARD_MS = 30_000;

/** Resolves once `cond()` is true; rejects with `what` when the hang guard passes first. */
export async function eventually(cond: () => boolean | Promise<boolean>, what: string, guardMs = HANG_GUARD_MS): Promise<void> {
  const end = Date.now() + guardMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`not within the ${guardMs} ms hang guard: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
