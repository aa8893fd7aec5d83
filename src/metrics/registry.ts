// A small Prometheus registry built for the hot path: label children are created once
// and cached in nested maps keyed by the label values themselves (no key strings are
// built per observation), counters and histogram buckets are plain numbers and
// Float64Arrays, and text rendering happens only when /metrics is scraped.
// A registry can also be copied out as plain data (snapshot) so the registries of
// several server shards can be merged and rendered as one (see snapshot.ts).

import { renderFamilies, type ChildSnapshot, type FamilySnapshot, type GaugeMerge } from './snapshot.js';

type Child = { snapshot(labels: string): ChildSnapshot };

abstract class Family<C extends Child> {
  private readonly root = new Map<string, unknown>();
  private readonly children: { labels: string; child: C }[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  protected abstract create(): C;
  abstract readonly type: string;

  /** The child for these label values (in labelNames order); created on first use. */
  labels(...values: string[]): C {
    let node: Map<string, unknown> = this.root;
    for (let i = 0; i < values.length - 1; i++) {
      let next = node.get(values[i]) as Map<string, unknown> | undefined;
      if (!next) {
        next = new Map();
        node.set(values[i], next);
      }
      node = next;
    }
    const last = values.length ? values[values.length - 1] : '';
    let child = node.get(last) as C | undefined;
    if (!child) {
      child = this.create();
      node.set(last, child);
      const labels = this.labelNames.map((n, i) => `${n}="${escapeLabel(values[i] ?? '')}"`).join(',');
      this.children.push({ labels, child });
    }
    return child;
  }

  /** How shards' values of a gauge combine (counters and histograms always add up). */
  get merge(): GaugeMerge {
    return 'sum';
  }

  snapshot(): FamilySnapshot {
    return { name: this.name, help: this.help, type: this.type, merge: this.merge, children: this.children.map(({ labels, child }) => child.snapshot(labels)) };
  }

  /** The sum of every child's value (counters and gauges). */
  total(): number {
    let n = 0;
    for (const { child } of this.children) n += (child as unknown as { value?: number }).value ?? 0;
    return n;
  }
}

function escapeLabel(v: string): string {
  return v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}

export class CounterChild implements Child {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
  snapshot(labels: string): ChildSnapshot {
    return { labels, value: this.value };
  }
}

export class GaugeChild implements Child {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
  dec(by = 1): void {
    this.value -= by;
  }
  set(v: number): void {
    this.value = v;
  }
  snapshot(labels: string): ChildSnapshot {
    return { labels, value: this.value };
  }
}

export class HistogramChild implements Child {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly buckets: readonly number[]) {
    this.counts = new Float64Array(buckets.length);
  }
  observe(v: number): void {
    this.sum += v;
    this.count++;
    const b = this.buckets;
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]) {
        this.counts[i]++;
        return;
      }
    }
  }
  snapshot(labels: string): ChildSnapshot {
    return { labels, buckets: this.buckets, counts: Array.from(this.counts), sum: this.sum, count: this.count };
  }
}

export class Counter extends Family<CounterChild> {
  readonly type = 'counter';
  protected create(): CounterChild {
    return new CounterChild();
  }
}

/**
 * A counter whose value is read at scrape time from a running total kept elsewhere (a
 * feed's applied batches, the etcd watch's reconnects). Every shard reads the same total,
 * so shards merge by max, not sum. Prometheus type counter: the name ends in _total.
 */
export class ObservedCounter extends Family<GaugeChild> {
  readonly type = 'counter';
  override get merge(): GaugeMerge {
    return 'max';
  }
  protected create(): GaugeChild {
    return new GaugeChild();
  }
}

export class Gauge extends Family<GaugeChild> {
  readonly type = 'gauge';
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly mergeAs: GaugeMerge = 'sum',
  ) {
    super(name, help, labelNames);
  }
  override get merge(): GaugeMerge {
    return this.mergeAs;
  }
  protected create(): GaugeChild {
    return new GaugeChild();
  }
}

export class Histogram extends Family<HistogramChild> {
  readonly type = 'histogram';
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
  }
  protected create(): HistogramChild {
    return new HistogramChild(this.buckets);
  }
}

export class Registry {
  private readonly families: Family<Child>[] = [];

  add<F extends Family<Child>>(f: F): F {
    this.families.push(f);
    return f;
  }

  /** Prometheus text exposition format 0.0.4. */
  render(): string {
    return renderFamilies(this.snapshot());
  }

  /** Every family's current values as plain data (structured-cloneable). */
  snapshot(): FamilySnapshot[] {
    return this.families.map((f) => f.snapshot());
  }
}
