// Deadlines of one fixed duration under one timer: a FIFO, since entries added later expire
// later. Adding is an append and a (monotonic) clock read; cancelling is an unlink. The one timer is armed
// for the oldest entry and, when it fires early (that entry was cancelled), re-armed for the
// oldest left, so a steady flow of short-lived entries arms about one timer per duration.
//
// Why not a setTimeout per entry: the engine streams' first-response deadline (300 s by
// default) is armed and cleared by every generation. Node makes a Timeout object, an async id
// and, when no other timer of that duration is pending (the lone request), a timer list in its
// priority queue and a native timer start for each one, and drops the list again on clear:
// about a third of the timer work of a lone request (docs/architecture.md, "What a lone
// request costs").

export interface Deadline<T> {
  /** Whose deadline it is (what the list's onExpire is called with). */
  readonly owner: T;
  /** The list it is in (cancel through it). */
  readonly list: FixedDeadlines<T>;
  /** When it expires (performance.now() ms: monotonic, as the timer is; a wall-clock step cannot fire it early). */
  readonly at: number;
  /** @internal */ prev: Deadline<T> | null;
  /** @internal */ next: Deadline<T> | null;
  /** @internal Still in its list (not expired, not cancelled). */ linked: boolean;
}

export class FixedDeadlines<T> {
  private head: Deadline<T> | null = null;
  private tail: Deadline<T> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private expiring = false;

  constructor(
    readonly ms: number,
    private readonly onExpire: (owner: T) => void,
  ) {}

  /** A deadline `ms` from now for `owner`; onExpire(owner) runs then unless it is cancelled first. */
  add(owner: T): Deadline<T> {
    const d: Deadline<T> = { owner, list: this, at: performance.now() + this.ms, prev: this.tail, next: null, linked: true };
    if (this.tail) this.tail.next = d;
    else this.head = d;
    this.tail = d;
    if (this.timer === undefined && !this.expiring) this.arm(this.ms);
    return d;
  }

  /** Cancel `d` (nothing if it already expired or was cancelled). */
  cancel(d: Deadline<T>): void {
    if (!d.linked) return;
    d.linked = false;
    if (d.prev) d.prev.next = d.next;
    else this.head = d.next;
    if (d.next) d.next.prev = d.prev;
    else this.tail = d.prev;
    d.prev = d.next = null;
  }

  /** Entries pending (for tests). */
  get size(): number {
    let n = 0;
    for (let d = this.head; d; d = d.next) n++;
    return n;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.expire(), ms);
    // An armed deadline keeps no process alive: its stream's socket does while it is open.
    this.timer.unref();
  }

  private expire(): void {
    this.timer = undefined;
    this.expiring = true;
    try {
      const now = performance.now();
      for (let d = this.head; d !== null && d.at <= now; d = this.head) {
        this.cancel(d);
        this.onExpire(d.owner);
      }
    } finally {
      this.expiring = false;
      if (this.head) this.arm(Math.max(1, this.head.at - performance.now()));
    }
  }
}
