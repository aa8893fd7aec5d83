// The router's pending queue: a binary heap ordered by strict priority tier
// (higher first), then by the policy key (lower first), then arrival.
//   fcfs: arrival time, earlier first
//   lcfs: arrival time, later first
//   wspt: weighted shortest processing time — estimated work (uncached prompt
//         tokens + expected output) over the weight
// agent_hints.priority moves a request earlier: fcfs/lcfs subtract
// priority × shift ms from the key; wspt divides the key by weightOf(priority).

export type QueuePolicy = 'fcfs' | 'lcfs' | 'wspt';
export const QUEUE_POLICIES: readonly QueuePolicy[] = ['fcfs', 'lcfs', 'wspt'];

export interface QueueKeyInput {
  arrivalMs: number;
  priority: number;
  /** Estimated work in tokens (wspt). */
  workTokens: number;
}

/** wspt weight: 1 at priority 0, doubling every 4 priority points. */
export function weightOf(priority: number): number {
  return Math.pow(2, priority / 4);
}

export function policyKey(policy: QueuePolicy, k: QueueKeyInput, priorityShiftMs: number): number {
  switch (policy) {
    case 'fcfs':
      return k.arrivalMs - k.priority * priorityShiftMs;
    case 'lcfs':
      return -k.arrivalMs - k.priority * priorityShiftMs;
    case 'wspt':
      return Math.max(k.workTokens, 1) / weightOf(k.priority);
  }
}

export interface Queued {
  strict: number;
  key: number;
  seq: number;
  /** Position in the heap; -1 once out. */
  pos: number;
}

function before(a: Queued, b: Queued): boolean {
  if (a.strict !== b.strict) return a.strict > b.strict;
  if (a.key !== b.key) return a.key < b.key;
  return a.seq < b.seq;
}

export class PendingQueue<T extends Queued> {
  private readonly heap: T[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(e: T): void {
    e.pos = this.heap.length;
    this.heap.push(e);
    this.up(e.pos);
  }

  peek(): T | undefined {
    return this.heap[0];
  }

  pop(): T | undefined {
    const top = this.heap[0];
    if (top) this.removeAt(0);
    return top;
  }

  remove(e: T): boolean {
    if (e.pos < 0 || this.heap[e.pos] !== e) return false;
    this.removeAt(e.pos);
    return true;
  }

  private removeAt(i: number): void {
    const h = this.heap;
    const out = h[i]!;
    const last = h.pop()!;
    out.pos = -1;
    if (i < h.length) {
      h[i] = last;
      last.pos = i;
      this.down(i);
      this.up(last.pos);
    }
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      this.swap(i, p);
      i = p;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && before(h[l]!, h[m]!)) m = l;
      if (r < h.length && before(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private swap(i: number, j: number): void {
    const h = this.heap;
    const t = h[i]!;
    h[i] = h[j]!;
    h[j] = t;
    h[i]!.pos = i;
    h[j]!.pos = j;
  }
}
