// bench/compare's parsers on recorded samples (test/fixtures/compare/): /proc/PID/stat and
// /proc/PID/status, `portico bench --json` summaries (a good and a failed run), and the
// RESULTS.md section it replaces. The comparison itself is not run here (minutes of load).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseRssKb, parseStat, sampleTree } from '../bench/compare/procfs.js';
import { parseBenchSummary, type BenchFigures } from '../bench/compare/bench-summary.js';
import { DEFAULT_SEARCH, judge, searchRate } from '../bench/compare/rate-search.js';
import { toolBodies } from '../bench/compare/tools-body.js';
import { BEGIN, END, renderTable, replaceSection, type Cell } from '../bench/compare/table.js';
import { WORKLOADS, rateArgs } from '../bench/compare/workloads.js';
import { DEPLOY_BEGIN, DEPLOY_END, renderDeployTable, replaceDeploySection } from '../bench/compare/deploy-table.js';

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
  assert.deepEqual(f, { requests: 6, failed: 0, requestsPerS: 13.789, outputTokens: 144, promptTokens: 240, ttftP50: 32.991, ttftP99: 60.959, e2eP50: 130.111, e2eP99: 161.919 });
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

// A frontend whose 1-token p99 crosses 10 ms at `knee` req/s and that cannot deliver more than `cap` req/s.
const fakeFrontend = (knee: number, cap = Infinity) => async (rate: number): Promise<BenchFigures> => ({
  requests: Math.round(rate * 3) + 20,
  failed: 0,
  requestsPerS: Math.min(rate * 0.98, cap),
  outputTokens: Math.round(rate * 3),
  promptTokens: Math.round(rate * 3) * 32,
  ttftP50: null,
  ttftP99: null,
  e2eP50: 2,
  e2eP99: rate <= knee ? 4 + (5 * rate) / knee : 25,
});

test('rate search: doubles, then bisects to within 10% below the rate where p99 crosses 10 ms, in at most 8 probes', async () => {
  const r = await searchRate(fakeFrontend(730));
  assert.ok(r.best && r.ceiling, JSON.stringify(r.probes.map((p) => p.rate)));
  assert.ok(r.best.rate <= 730 && r.ceiling.rate > 730, `${r.best.rate} .. ${r.ceiling.rate}`);
  assert.ok((r.ceiling.rate - r.best.rate) / r.best.rate < 0.1 || r.probes.length === DEFAULT_SEARCH.maxProbes);
  assert.ok(r.probes.length <= DEFAULT_SEARCH.maxProbes);
  assert.deepEqual(r.probes.slice(0, 5).map((p) => p.rate), [100, 200, 400, 800, 600]);
  assert.match(r.probes.find((p) => p.rate === 800)!.why!, /^p99 25\.00 ms$/);
});

test('rate search: a rate that is not delivered fails (open loop that queued), however low its p99', async () => {
  const r = await searchRate(fakeFrontend(10_000, 300));
  assert.ok(r.best && r.best.figures.requestsPerS >= 0.8 * r.best.rate && r.ceiling!.rate * 0.8 > 300, JSON.stringify(r.probes.map((p) => [p.rate, p.why])));
  assert.match(r.probes.find((p) => p.rate === 400)!.why!, /^delivered 300\.0 of 400 req\/s$/);
});

test('rate search: when even the lowest rate fails the answer is none, found by halving down to the minimum; a failed request fails a probe', async () => {
  const r = await searchRate(fakeFrontend(1));
  assert.equal(r.best, null);
  assert.deepEqual(r.probes.map((p) => p.rate), [100, 50, 25, 20]);
  const failing = judge(100, { requests: 320, failed: 1, requestsPerS: 100, outputTokens: 319, promptTokens: 10240, ttftP50: null, ttftP99: null, e2eP50: 1, e2eP99: 2 }, DEFAULT_SEARCH);
  assert.deepEqual([failing.pass, failing.why], [false, '1 failed']);
  const top = await searchRate(fakeFrontend(1e9), { ...DEFAULT_SEARCH, max: 800 });
  assert.deepEqual([top.best?.rate, top.ceiling, top.probes.length], [800, null, 4]);
});

test('rate search probes and the tools workload read like any portico bench run: recorded open-loop and tools-dataset summaries', () => {
  const open = parseBenchSummary(fixture('bench-summary-rate.json'));
  assert.ok(open.requests > 0 && open.failed === 0 && open.e2eP99 > 0 && open.requestsPerS > 0, JSON.stringify(open));
  const rate = WORKLOADS.find((w) => w.key === 'rate')!;
  const args = rateArgs(rate, 250);
  assert.deepEqual(args.slice(-4), ['--rate', '250', '--requests', '750']);
  assert.deepEqual(rateArgs(rate, 400).slice(-4), ['--rate', '400', '--requests', '1200']);
  assert.ok(args.includes('--max-concurrency') && !args.includes('--stream'));
  assert.deepEqual(rateArgs(rate, 20).slice(-2), ['--requests', '150']);
  const tools = parseBenchSummary(fixture('bench-summary-tools.json'));
  assert.ok(tools.requests > 0 && tools.failed === 0 && tools.ttftP50 !== null && tools.outputTokens === tools.requests * 64, JSON.stringify(tools));
});

test('the tools dataset: OpenAI chat bodies with two hermes-style function tools, tool_choice auto, varied questions', () => {
  const bodies = toolBodies(8, 64);
  assert.equal(new Set(bodies.map((b) => JSON.stringify(b.messages))).size, 8);
  for (const b of bodies) {
    assert.equal(b.tool_choice, 'auto');
    assert.equal(b.max_tokens, 64);
    const tools = b.tools as { type: string; function: { name: string; parameters: { type: string; required: string[] } } }[];
    assert.deepEqual(tools.map((t) => [t.type, t.function.name, t.function.parameters.type]), [['function', 'get_weather', 'object'], ['function', 'search_flights', 'object']]);
  }
  assert.equal(WORKLOADS.filter((w) => w.tools).length, 1);
  assert.ok(!WORKLOADS.find((w) => w.tools)!.args.includes('--dataset'), 'run.ts adds the dataset path');
});

test('the table: rate search and tool-calling rows; a search where nothing passed shows "< lowest rate"', () => {
  const results = new Map<string, Record<string, Cell>[]>([
    ['Portico', [{ 'rate.rps': { value: 480 }, 'rate.e2eP99': { value: 8.5 }, 'rate.ceiling': { value: 520 }, 'tools.cpuPerRequestUs': { value: 900 } }, { 'rate.rps': { value: 0, below: 20 } }]],
    ['SMG', [{ 'rate.rps': { value: 0, below: 20 } }]],
  ]);
  const table = renderTable(WORKLOADS, results, new Map(), { rounds: 2, machine: '2 cores', toolFailures: new Map([['SMG', 'exited with 2 before it was ready']]) });
  assert.match(table, /\| 1-token req\/s at e2e p99 < 10 ms \(rate search, delivered\) \| 480; < 20 in 1 round\(s\) \| < 20 \|/);
  assert.match(table, /\| tool-calling chat, parser on: CPU per request \(µs\) \| 900 \| — \|/);
  assert.match(table, /SMG with its tool-call parser did not run: exited with 2/);
});

test('the deployment-shape table: medians with ranges, Portico against SMG, the floor and other builds, failures named; it replaces only its own section', () => {
  const cells = {
    'idle.cpuMsPerS': { Portico: [1, 1], SMG: [7, 6] },
    'r100.cpuUs': { Portico: [700, 720], SMG: [700, 700], floor: [400, 420], 'Portico@/b': [350, 370] },
    'r100.failed': { Portico: [0, 2], SMG: [0, 0], floor: [0, 0], 'Portico@/b': [0, 0] },
    'stream.cpuUsPerToken': { Portico: [20, 20], SMG: [25, 25] },
  };
  const t = renderDeployTable(cells, ['Portico', 'SMG', 'floor', 'Portico@/b'], [100], { header: 'H', failures: new Map([['Dynamo', 'not ready']]) });
  assert.match(t, /\| measure \| Portico \| SMG \| floor \| Portico@\/b \| Portico\/SMG \| Portico\/floor \| Portico@\/b\/Portico \|/);
  assert.match(t, /\| 100 req\/s: CPU per 1-token request \(µs\) \| 710 \(700–720\) \| 700 \| 410 \(400–420\) \| 360 \(350–370\) \| 1\.01 \| 1\.73 \| 0\.51 \|/);
  assert.match(t, /\| streams: CPU per streamed token \(µs\) \| 20\.0 \| 25\.0 \| — \| — \| 0\.80 \| — \| — \|/);
  assert.match(t, /Failed requests: Portico 2, SMG 0, floor 0, Portico@\/b 0\./);
  assert.match(t, /Dynamo did not complete: not ready/);
  // Portico started with node flags against plain Portico, nothing else: its ratio column, no empty one.
  const flags = renderDeployTable({ 'r100.cpuUs': { Portico: [800], 'Portico^--min-semi-space-size=16': [600] } }, ['Portico', 'Portico^--min-semi-space-size=16'], [100], { header: 'H' });
  assert.match(flags, /^\| measure \| Portico \| Portico\^--min-semi-space-size=16 \| Portico\^--min-semi-space-size=16\/Portico \|$/m);
  assert.match(flags, /^\| 100 req\/s: CPU per 1-token request \(µs\) \| 800 \| 600 \| 0\.75 \|$/m);
  assert.doesNotMatch(flags, /\|\s*\|\s*$/m, 'no empty column');
  const doc = `# R\n\nbefore\n\n${DEPLOY_BEGIN}\nold\n${DEPLOY_END}\nafter\n`;
  const once = replaceDeploySection(doc, t);
  assert.ok(once.startsWith('# R\n\nbefore\n\n') && once.endsWith('after\n') && !once.includes('old'));
  assert.equal(replaceDeploySection(once, t), once);
  assert.match(replaceDeploySection('# R\n', t), /## The deployment shape[^\n]*\n\n<!-- bench:deploy-shape begin -->/);
});
