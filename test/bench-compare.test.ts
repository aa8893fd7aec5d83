// bench/compare's parsers on recorded samples (test/fixtures/compare/): /proc/PID/stat and
// /proc/PID/status, `portico bench --json` summaries (a good and a failed run), and the
// RESULTS.md section it replaces. The comparison itself is not run here (minutes of load).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseRssKb, parseStat, sampleTree } from '../bench/compare/procfs.js';
import { parseBenchSummary } from '../bench/compare/bench-summary.js';
import { BEGIN, END, renderTable, replaceSection } from '../bench/compare/table.js';
import { WORKLOADS } from '../bench/compare/workloads.js';

const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`../../test/fixtures/compare/${name}`, import.meta.url)), 'utf8');

test('/proc/PID/stat: pid, ppid and utime + stime, also when the command name holds spaces and parentheses', () => {
  const line = fixture('proc-stat-paren-name.txt');
  const s = parseStat(line);
  assert.deepEqual(s, { pid: 5379, ppid: 5338, cpuTicks: 0 });
  const tricky = line.replace('(sleep)', '(py (w) 1) x)').replace(/^(\S+ \(.*\) \S+ \S+ \S+ \S+ \S+ \S+ \S+ \S+ \S+ \S+ \S+ )0 0 /, '$1712 38 ');
  assert.deepEqual(parseStat(tricky), { pid: 5379, ppid: 5338, cpuTicks: 750 });
  assert.throws(() => parseStat('garbage'), /not a \/proc\/PID\/stat line/);
  // This very process, live: it has used some CPU and has a resident set.
  const self = sampleTree(process.pid);
  assert.ok(self.cpuTicks > 0 && self.rssKb > 10_000, JSON.stringify(self));
});

test('/proc/PID/status: VmRSS in kB; none (a zombie) is 0', () => {
  assert.equal(parseRssKb(fixture('proc-status.txt')), 1732);
  assert.equal(parseRssKb('Name:\tx\nState:\tZ (zombie)\n'), 0);
});

test('portico bench summaries: the figures of a good run; a run where nothing succeeded is an error naming the first failure', () => {
  const f = parseBenchSummary(fixture('bench-summary.json'));
  assert.deepEqual(f, { requests: 6, failed: 0, requestsPerS: 13.789, outputTokens: 144, ttftP50: 32.991, ttftP99: 60.959, e2eP50: 130.111, e2eP99: 161.919 });
  assert.throws(() => parseBenchSummary(fixture('bench-summary-failed.json')), /no request succeeded \(first error: .+\)/);
  assert.throws(() => parseBenchSummary(JSON.stringify({ requests: 'x', e2eMs: { p50: 1, p99: 2 } })), /requests is not a number/);
});

test('the table goes between its markers in RESULTS.md, replacing the previous one and nothing else', () => {
  const results = new Map([['Portico', [{ idleRssMb: { value: 80 }, 'unary.cpuPerRequestUs': { value: 110 } }, { idleRssMb: { value: 82 }, 'unary.cpuPerRequestUs': { value: 120, failed: 2 } }]]]);
  const table = renderTable(WORKLOADS, results, new Map([['Dynamo 1.6.1', 'exited with 1 before it was ready']]), { rounds: 2, machine: '2 cores' });
  assert.match(table, /\| figure \| Portico \| Dynamo 1\.6\.1 \|/);
  assert.match(table, /\| RSS idle \(MB\) \| 81 \(80–82\) \| did not run \|/);
  assert.match(table, /\| CPU per 1-token request \(µs\) \| 115 \(110–120\) ⚠ 2 failed \|/);
  assert.match(table, /Dynamo 1\.6\.1 did not run: exited with 1/);
  const doc = '# Results\n\nintro\n';
  const once = replaceSection(doc, table);
  assert.ok(once.startsWith(doc) && once.includes(`${BEGIN}\n${table}${END}`));
  const twice = replaceSection(`${once}\n## later section\n`, 'new table\n');
  assert.equal(twice, `${doc}\n${BEGIN}\nnew table\n${END}\n\n## later section\n`);
});
