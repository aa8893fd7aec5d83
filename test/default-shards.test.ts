// The default of --shards: the CPUs a process may use (affinity, cgroup quota) and the shard
// count they give.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cgroupCpuLimit, shardsFor, usableCpus, MAX_DEFAULT_SHARDS } from '../src/cli/default-shards.js';
import { availableParallelism } from 'node:os';

const files = (m: Record<string, string>) => (path: string) => m[path] ?? null;

test('one shard on up to two CPUs, half the CPUs above, capped', () => {
  assert.equal(shardsFor(1), 1);
  assert.equal(shardsFor(2), 1);
  assert.equal(shardsFor(3), 1);
  assert.equal(shardsFor(4), 2);
  assert.equal(shardsFor(9), 4);
  assert.equal(shardsFor(128), MAX_DEFAULT_SHARDS);
});

test('cgroup v2 cpu.max: a quota rounds up to whole CPUs, "max" is no limit', () => {
  assert.equal(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu.max': '200000 100000\n' })), 2);
  assert.equal(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu.max': '150000 100000\n' })), 2);
  assert.equal(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu.max': '50000 100000\n' })), 1);
  assert.equal(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu.max': 'max 100000\n' })), null);
});

test('cgroup v1 quota and period; -1 is no limit; no cgroup files, no limit', () => {
  assert.equal(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '400000\n', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n' })), 4);
  assert.equal(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1\n', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n' })), null);
  assert.equal(cgroupCpuLimit(files({})), null);
  assert.equal(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu.max': 'garbage' })), null);
});

test('the usable CPUs are the affinity capped by the quota', () => {
  const affinity = availableParallelism();
  assert.equal(usableCpus(files({})), affinity);
  assert.equal(usableCpus(files({ '/sys/fs/cgroup/cpu.max': '100000 100000' })), 1);
  assert.equal(usableCpus(files({ '/sys/fs/cgroup/cpu.max': `${(affinity + 8) * 100000} 100000` })), affinity);
});
