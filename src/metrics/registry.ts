// A small Prometheus registry built for the hot path: label children are created once
// and cached in nested maps keyed by the label values themselves (no key strings are
// built per observation), counters and histogram buckets are plain numbers and
// Float64Arrays, and text rendering happens only when /metrics is scraped.

type Child = { render(name: string, labels: string): string };

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

  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} ${this.type}\n`;
    for (const { labels, child } of this.children) out += child.render(this.name, labels);
    return out;
  }
}

function escapeLabel(v: string): string {
  return v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}

function braces(labels: string, extra = ''): string {
  const all = labels && extra ? `${labels},${extra}` : labels || extra;
  return all ? `{${all}}` : '';
}

export class CounterChild implements Child {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
  render(name: string, labels: string): string {
    return `${name}${braces(labels)} ${this.value}\n`;
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
  render(name: string, labels: string): string {
    return `${name}${braces(labels)} ${this.value}\n`;
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
  render(name: string, labels: string): string {
    let out = '';
    let cum = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      cum += this.counts[i];
      out += `${name}_bucket${braces(labels, `le="${this.buckets[i]}"`)} ${cum}\n`;
    }
    out += `${name}_bucket${braces(labels, 'le="+Inf"')} ${this.count}\n`;
    out += `${name}_sum${braces(labels)} ${this.sum}\n${name}_count${braces(labels)} ${this.count}\n`;
    return out;
  }
}

export class Counter extends Family<CounterChild> {
  readonly type = 'counter';
  protected create(): CounterChild {
    return new CounterChild();
  }
}

export class Gauge extends Family<GaugeChild> {
  readonly type = 'gauge';
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
    return this.families.map((f) => f.render()).join('');
  }
}
