// `portico bench` against a real server: it sends what it says, measures, and reports
// failures with a non-zero exit.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startPortico, runPortico, QWEN3 } from './helpers/portico.js';

test('portico bench drives a server and reports latency and throughput', async (t) => {
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'sim', '--mock-workers', '2']);
  t.after(() => s.stop());
  const r = await runPortico(['bench', '--url', s.url, '--requests', '12', '--concurrency', '4', '--isl', '64', '--osl', '8', '--shared-prefix', '32', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout) as { requests: number; failed: number; ttftMs: { p50: number } | null; itlMs: unknown; outputTokensPerS: number; promptTokens: number };
  assert.equal(summary.requests, 12);
  assert.equal(summary.failed, 0);
  assert.ok(summary.ttftMs && summary.ttftMs.p50 > 0);
  assert.ok(summary.itlMs);
  assert.ok(summary.outputTokensPerS > 0);
  assert.ok(summary.promptTokens > 12 * 32);

  const completions = await runPortico(['bench', '--url', s.url, '--endpoint', 'completions', '--no-stream', '--requests', '4', '--concurrency', '2', '--osl', '4', '--json']);
  assert.equal(completions.code, 0, completions.stderr);
  assert.equal((JSON.parse(completions.stdout) as { failed: number }).failed, 0);
});

test('portico bench exits non-zero and shows the first error when requests fail', async (t) => {
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1']);
  t.after(() => s.stop());
  const r = await runPortico(['bench', '--url', s.url, '--model', 'wrong', '--requests', '3', '--concurrency', '1']);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /3 failed/);
  assert.match(r.stdout, /first error  404/);
});
