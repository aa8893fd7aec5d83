// The default of `--shards`: how many HTTP shards a frontend starts when not told.
//
// A shard is a whole request path on its own thread, so a shard per CPU looks natural, but a
// frontend rarely has its CPUs to itself: clients, engines' CPU-side processes, the kernel's
// network work and V8's own GC and compiler threads (a set per shard) share them. Measured on
// 2 CPUs shared with the load and the engine (bench/RESULTS.md, "Shards by default"), one shard
// beat two on every CPU-per-request row; a second shard pays off only when a CPU is free for
// it. So: one shard on up to 2 CPUs, and half the CPUs above that (at most 16), counting the
// CPUs this process may actually use — its affinity mask (what os.availableParallelism()
// reports) and its cgroup CPU quota (a container limited to 2 CPUs on a 64-core node must
// not start 32 shards and be throttled).

import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export const MAX_DEFAULT_SHARDS = 16;

/** CPUs a cgroup quota allows (cgroup v2 `cpu.max`, or v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), rounded up; null without a quota. */
export function cgroupCpuLimit(read: (path: string) => string | null = readOrNull): number | null {
  const v2 = read('/sys/fs/cgroup/cpu.max');
  if (v2 !== null) {
    const [quota, period] = v2.trim().split(/\s+/);
    if (quota === 'max' || quota === undefined) return null;
    return limitOf(Number(quota), Number(period ?? 100000));
  }
  const q = read('/sys/fs/cgroup/cpu/cpu.cfs_quota_us') ?? read('/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us');
  const p = read('/sys/fs/cgroup/cpu/cpu.cfs_period_us') ?? read('/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us');
  if (q === null || p === null) return null;
  return limitOf(Number(q.trim()), Number(p.trim()));
}

function limitOf(quota: number, period: number): number | null {
  if (!Number.isFinite(quota) || !Number.isFinite(period) || quota <= 0 || period <= 0) return null;
  return Math.max(1, Math.ceil(quota / period));
}

/** Shards for a frontend that may use `cpus` CPUs. */
export function shardsFor(cpus: number): number {
  if (cpus <= 2) return 1;
  return Math.min(MAX_DEFAULT_SHARDS, Math.floor(cpus / 2));
}

/** The CPUs this process may use: its affinity, capped by its cgroup quota. */
export function usableCpus(read?: (path: string) => string | null): number {
  const limit = cgroupCpuLimit(read);
  const affinity = availableParallelism();
  return limit === null ? affinity : Math.min(affinity, limit);
}

export function defaultShards(): number {
  return shardsFor(usableCpus());
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
