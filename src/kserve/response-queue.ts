// The responses of the requests sharing one ModelStreamInfer stream, in the order they
// are made: producers push, the stream's writer iterates until the queue is closed. There
// is no bound: a request produces at the engine's token rate and HTTP/2 flow control
// holds the writer back, so what waits here is at most the tokens made meanwhile.

export class ResponseQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private head = 0;
  private closed = false;
  private wake: (() => void) | null = null;

  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    this.signal();
  }

  /** No more items: the iteration ends once the queued ones are taken. */
  close(): void {
    this.closed = true;
    this.signal();
  }

  private signal(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.head < this.items.length) {
        const item = this.items[this.head++];
        if (this.head === this.items.length) {
          this.items = [];
          this.head = 0;
        }
        yield item;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}
