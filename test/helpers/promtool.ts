// `promtool check metrics` (Debian package `prometheus`, in .ci/run's APT_PACKAGES) over a
// /metrics text: Prometheus's own linter (counters end in _total, other types do not, HELP
// and TYPE well formed).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const PROMTOOL = '/usr/bin/promtool';

export function assertPromtoolClean(text: string): void {
  assert.ok(existsSync(PROMTOOL), 'promtool is missing: install the Debian package `prometheus` (it is in .ci/run APT_PACKAGES)');
  const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(check.status, 0, `promtool check metrics:\n${check.stdout}${check.stderr}`);
}
