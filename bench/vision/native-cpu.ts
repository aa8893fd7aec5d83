// The native processor's CPU time per image, as the vision benches time it: processSync
// (decode + resize + normalize + patchify on the calling thread), process.cpuUsage around
// each call, median of `rounds` after one warm-up call.

import type { ImageProcessor } from '../../src/native/vision.js';

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export function nativeCpuUs(proc: ImageProcessor, bytes: Buffer, rounds: number): number {
  proc.processSync(bytes);
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = process.cpuUsage();
    proc.processSync(bytes);
    const d = process.cpuUsage(t0);
    times.push(d.user + d.system);
  }
  return median(times);
}
