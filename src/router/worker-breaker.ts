// The failure breaker of one worker: what takes a worker out of rotation when its
// streams keep failing although its connection and health check look fine. One failed
// stream never does (a reset caused by one client's oversized request, one engine
// error): the breaker opens on `consecutive` stream failures in a row, or when at least
// `minRequests` ended in the last `windowMs` and `failureRate` of them failed. The pool
// marks the worker down when it opens; the next passing health check closes it again.

export interface BreakerOptions {
  /** Stream failures in a row that open the breaker. Default 5. */
  consecutive: number;
  /** Window of the failure rate, in ms. Default 10000. */
  windowMs: number;
  /** Requests ended in the window before the rate counts. Default 20. */
  minRequests: number;
  /** Failed share of the window's requests that opens the breaker (0..1; 0 or above 1: never). Default 0.5. */
  failureRate: number;
}

export const DEFAULT_BREAKER: BreakerOptions = { consecutive: 5, windowMs: 10_000, minRequests: 20, failureRate: 0.5 };

export class WorkerBreaker {
  private inARow = 0;
  private windowStart = 0;
  private ok = 0;
  private failed = 0;

  constructor(private readonly o: BreakerOptions) {}

  success(now: number): void {
    this.inARow = 0;
    this.roll(now);
    this.ok++;
  }

  /** Counts one failed stream; true when the breaker opens on it. */
  failure(now: number): boolean {
    this.inARow++;
    this.roll(now);
    this.failed++;
    if (this.o.consecutive > 0 && this.inARow >= this.o.consecutive) return true;
    const total = this.ok + this.failed;
    return this.o.failureRate > 0 && total >= this.o.minRequests && this.failed / total >= this.o.failureRate;
  }

  reset(): void {
    this.inARow = 0;
    this.ok = 0;
    this.failed = 0;
  }

  private roll(now: number): void {
    if (now - this.windowStart < this.o.windowMs) return;
    this.windowStart = now;
    this.ok = 0;
    this.failed = 0;
  }
}
