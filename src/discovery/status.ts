// The discovery client's state, in a SharedArrayBuffer: the main thread's watcher
// writes it, every server shard reads it for /health and /metrics.

const ENABLED = 0;
const CONNECTED = 1;
const RECONNECTS = 2;
const IGNORED = 3;
const KNOWN = 4;
const INVALID = 5;
const FIELDS = 6;

export interface DiscoveryView {
  connected: boolean;
  /** Times the watch came back after etcd was lost. */
  reconnects: number;
  /** Worker keys currently known. */
  workers: number;
  /** Registrations of a model this frontend does not serve (logged and skipped). */
  ignored: number;
  /** Keys whose value is not a worker record. */
  invalid: number;
}

export class DiscoveryStatus {
  readonly cells: Int32Array;
  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(FIELDS * 4)) {
    this.cells = new Int32Array(buffer);
    Atomics.store(this.cells, ENABLED, 1);
  }
  setConnected(up: boolean): void {
    Atomics.store(this.cells, CONNECTED, up ? 1 : 0);
  }
  countReconnect(): void {
    Atomics.add(this.cells, RECONNECTS, 1);
  }
  countIgnored(): void {
    Atomics.add(this.cells, IGNORED, 1);
  }
  countInvalid(): void {
    Atomics.add(this.cells, INVALID, 1);
  }
  setKnown(n: number): void {
    Atomics.store(this.cells, KNOWN, n);
  }
  view(): DiscoveryView {
    const c = this.cells;
    return { connected: Atomics.load(c, CONNECTED) === 1, reconnects: Atomics.load(c, RECONNECTS), workers: Atomics.load(c, KNOWN), ignored: Atomics.load(c, IGNORED), invalid: Atomics.load(c, INVALID) };
  }
}
