// Metric values as plain data: what a registry copies out when /metrics is scraped,
// how the copies of several server shards merge into one, and the Prometheus text
// rendering of the result. Nothing here runs on the request path.

/** How shards' values of one gauge combine: 'sum' (requests in flight) or 'max' (process-wide values). */
export type GaugeMerge = 'sum' | 'max';

export type ChildSnapshot =
  | { labels: string; value: number }
  | { labels: string; buckets: readonly number[]; counts: number[]; sum: number; count: number };

export interface FamilySnapshot {
  name: string;
  help: string;
  type: string;
  merge: GaugeMerge;
  children: ChildSnapshot[];
}

/**
 * One registry from several: families and children are matched by name and label
 * set (first appearance keeps its place); counters add up, histograms add bucket by
 * bucket, gauges add up or take the largest value as their family says.
 */
export function mergeSnapshots(shards: readonly FamilySnapshot[][]): FamilySnapshot[] {
  const out: FamilySnapshot[] = [];
  const families = new Map<string, { f: FamilySnapshot; byLabels: Map<string, ChildSnapshot> }>();
  for (const shard of shards) {
    for (const f of shard) {
      let m = families.get(f.name);
      if (!m) {
        m = { f: { ...f, children: [] }, byLabels: new Map() };
        families.set(f.name, m);
        out.push(m.f);
      }
      for (const c of f.children) {
        const have = m.byLabels.get(c.labels);
        if (!have) {
          const copy: ChildSnapshot = 'counts' in c ? { ...c, counts: [...c.counts] } : { ...c };
          m.byLabels.set(c.labels, copy);
          m.f.children.push(copy);
        } else if ('counts' in have && 'counts' in c) {
          for (let i = 0; i < have.counts.length; i++) have.counts[i]! += c.counts[i] ?? 0;
          have.sum += c.sum;
          have.count += c.count;
        } else if ('value' in have && 'value' in c) {
          have.value = f.merge === 'max' ? Math.max(have.value, c.value) : have.value + c.value;
        }
      }
    }
  }
  return out;
}

function braces(labels: string, extra = ''): string {
  const all = labels && extra ? `${labels},${extra}` : labels || extra;
  return all ? `{${all}}` : '';
}

/** Prometheus text exposition format 0.0.4. */
export function renderFamilies(families: readonly FamilySnapshot[]): string {
  let out = '';
  for (const f of families) {
    const name = f.name;
    out += `# HELP ${name} ${f.help}\n# TYPE ${name} ${f.type}\n`;
    for (const c of f.children) {
      if ('value' in c) {
        out += `${name}${braces(c.labels)} ${c.value}\n`;
        continue;
      }
      let cum = 0;
      for (let i = 0; i < c.buckets.length; i++) {
        cum += c.counts[i]!;
        out += `${name}_bucket${braces(c.labels, `le="${c.buckets[i]}"`)} ${cum}\n`;
      }
      out += `${name}_bucket${braces(c.labels, 'le="+Inf"')} ${c.count}\n`;
      out += `${name}_sum${braces(c.labels)} ${c.sum}\n${name}_count${braces(c.labels)} ${c.count}\n`;
    }
  }
  return out;
}
