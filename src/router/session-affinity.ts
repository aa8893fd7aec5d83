// Session affinity: X-Dynamo-Session-ID pins a session to the worker that served
// its last request, for a TTL refreshed by every request of the session.

export class SessionAffinity {
  private readonly pins = new Map<string, { workerId: number; expires: number }>();
  private lastSweep = 0;

  constructor(
    readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.pins.size;
  }

  lookup(session: string): number | undefined {
    const p = this.pins.get(session);
    if (!p) return undefined;
    if (p.expires <= this.now()) {
      this.pins.delete(session);
      return undefined;
    }
    return p.workerId;
  }

  pin(session: string, workerId: number): void {
    const t = this.now();
    this.pins.set(session, { workerId, expires: t + this.ttlMs });
    if (t - this.lastSweep > this.ttlMs) {
      this.lastSweep = t;
      for (const [s, p] of this.pins) if (p.expires <= t) this.pins.delete(s);
    }
  }

  forgetWorker(workerId: number): void {
    for (const [s, p] of this.pins) if (p.workerId === workerId) this.pins.delete(s);
  }
}
