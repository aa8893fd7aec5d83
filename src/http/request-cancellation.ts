// A request's cancellation without an AbortController: an exchange makes one per generation
// request, and Node's AbortController (an EventTarget, its prototype set per instance) plus
// the listener bookkeeping of EventTarget cost ~4% of a short unary chat's CPU. It behaves
// as an AbortSignal does for what generations use: `aborted`, `reason` (an AbortError
// DOMException), and 'abort' listeners, each called once, in the order they were added,
// with an exception thrown by one reported as uncaught (as EventTarget does), not stopping
// the others.

import type { Cancellation } from '../engine/types.js';

export class RequestCancellation implements Cancellation {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] | null = null;

  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (this.aborted) return; // an aborted AbortSignal never fires again
    const l = (this.listeners ??= []);
    if (!l.includes(listener)) l.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const l = this.listeners;
    if (!l) return;
    const i = l.indexOf(listener);
    if (i >= 0) l.splice(i, 1);
  }

  /** Mark aborted and call every listener once. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = new DOMException('This operation was aborted', 'AbortError');
    const l = this.listeners;
    this.listeners = null;
    if (!l) return;
    for (const f of l) {
      try {
        f();
      } catch (err) {
        process.nextTick(() => {
          throw err;
        });
      }
    }
  }
}
