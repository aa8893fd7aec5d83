// The live progress line on a terminal: requests done (of how many, or seconds of how many),
// the rate so far, p50 TTFT so far and errors, redrawn in place four times a second. The CLI
// shows it only when stderr is a TTY; piped or redirected output stays quiet.

import { LatencyHistogram } from './histogram.js';
import type { RequestRecord } from './loop.js';

export class ProgressLine {
  private ttft = new LatencyHistogram();
  private done = 0;
  private failed = 0;
  private start = performance.now();
  private label = '';
  private total: { requests: number | null; durationS: number | null } = { requests: null, durationS: null };
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly out: NodeJS.WriteStream) {}

  /** Starts a new phase (warm-up, a sweep cell, the run). */
  begin(label: string, requests: number | null, durationS: number | null): void {
    this.stop();
    this.label = label;
    this.total = { requests, durationS };
    this.done = 0;
    this.failed = 0;
    this.ttft = new LatencyHistogram();
    this.start = performance.now();
    this.timer = setInterval(() => this.draw(), 250);
    this.timer.unref();
    this.draw();
  }

  record(r: RequestRecord): void {
    this.done++;
    if (!r.ok) this.failed++;
    if (r.ttftMs !== null) this.ttft.record(r.ttftMs);
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.draw();
    this.out.write('\n');
  }

  private draw(): void {
    const s = (performance.now() - this.start) / 1000;
    const of = this.total.requests !== null ? `/${this.total.requests}` : '';
    const time = this.total.durationS !== null ? `  ${s.toFixed(0)}/${this.total.durationS} s` : `  ${s.toFixed(1)} s`;
    const ttft = this.ttft.count ? `  p50 TTFT ${this.ttft.percentileMs(50).toFixed(1)} ms` : '';
    const line = `${this.label}: ${this.done}${of} done${time}  ${(this.done / Math.max(s, 1e-3)).toFixed(1)} req/s${ttft}  ${this.failed} errors`;
    this.out.write(`\r\x1b[2K${line}`);
  }
}
