// Latency statistics from an HDR histogram (npm hdr-histogram-js, 3 significant digits, µs
// resolution, up to one hour), so percentiles of long runs cost constant memory.

import * as hdr from 'hdr-histogram-js';

export interface Stats {
  count: number;
  mean: number;
  min: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
}

const ms = (us: number) => Math.round(us) / 1000;

export class LatencyHistogram {
  private readonly h = hdr.build({ bitBucketSize: 'packed', useWebAssembly: false, lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });
  private sum = 0;

  /** Records a latency in milliseconds. */
  record(valueMs: number): void {
    const us = Math.max(1, Math.min(3_600_000_000, Math.round(valueMs * 1000)));
    this.h.recordValue(us);
    this.sum += us;
  }

  get count(): number {
    return this.h.totalCount;
  }

  percentileMs(p: number): number {
    return ms(this.h.getValueAtPercentile(p));
  }

  /** null when nothing was recorded. The mean is exact (the sum of what was recorded). */
  stats(): Stats | null {
    const n = this.h.totalCount;
    if (!n) return null;
    // A percentile is its bucket's highest equivalent value: never report one above the max.
    const max = this.h.maxValue;
    const at = (p: number) => Math.min(this.percentileMs(p), ms(max));
    return {
      count: n,
      mean: ms(this.sum / n),
      min: ms(this.h.minNonZeroValue),
      p50: at(50),
      p90: at(90),
      p95: at(95),
      p99: at(99),
      max: ms(max),
    };
  }

  /** Points of the cumulative distribution (value ms, fraction ≤ it), for plots. */
  cdf(points = 200): [number, number][] {
    const out: [number, number][] = [];
    if (!this.h.totalCount) return out;
    for (let i = 0; i <= points; i++) {
      const q = (100 * i) / points;
      out.push([ms(this.h.getValueAtPercentile(Math.max(q, 0.0001))), q / 100]);
    }
    return out;
  }
}
