// Requests of the mock engine waiting outside its scheduler (a disaggregated leg waiting for
// its KV hand-over), so that an Abort rpc reaches them as it reaches a running request.

interface Pending {
  controller: AbortController;
  detach(): void;
}

export class PendingRequests {
  private readonly byId = new Map<string, Pending>();
  private idle: Array<() => void> = [];

  /** Start waiting for `id`: the controller aborts with `signal` or an Abort rpc. */
  begin(id: string, signal: AbortSignal): AbortController {
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    if (signal.aborted) controller.abort();
    else signal.addEventListener('abort', onAbort, { once: true });
    this.byId.set(id, { controller, detach: () => signal.removeEventListener('abort', onAbort) });
    return controller;
  }

  end(id: string, controller: AbortController): void {
    const p = this.byId.get(id);
    if (p?.controller !== controller) return;
    p.detach();
    this.byId.delete(id);
    if (this.byId.size === 0) for (const f of this.idle.splice(0)) f();
  }

  /** Resolves once no request is waiting. */
  whenIdle(): Promise<void> {
    return this.byId.size === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  /** The Abort rpc: true when `id` was waiting. */
  abort(id: string): boolean {
    const p = this.byId.get(id);
    if (!p) return false;
    p.controller.abort();
    return true;
  }

  get size(): number {
    return this.byId.size;
  }
}
