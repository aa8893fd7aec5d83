// bench/real-engine: Portico and SGLang's gateway (PyPI smg) in front of ONE vLLM CPU worker
// (random weights, tiny Qwen3 shape: test/helpers/vllm.ts), the same requests through each,
// interleaved over rounds (Portico, SMG, then the engine alone, each round). A cell is an
// open-loop Poisson load at a fixed rate of short streamed chats (`portico bench`, one seed:
// the same arrivals and prompts for every frontend), after a warm-up run at that rate. The
// frontend's CPU (its process tree, utime + stime from /proc) over the cell is divided by the
// requests it served; TTFT and e2e come from the client. "Engine alone" (direct.ts, a
// process on the frontends' CPUs) sends the same arrivals as Generate calls of the same
// prompt length with Portico's engine client, so each frontend's TTFT overhead is its TTFT
// minus that one. vLLM runs without prefix caching, so
// every frontend's prompts cost the engine the same.
//   node dist/bench/real-engine/run.js --venv DIR [--rounds N] [--port P] [--rates 5,20]
//     [--duration S] [--warmup N] [--frontend-cpus LIST]
// (bench/real-engine/run.sh makes the venv, pins this process and calls it; `npm run bench:real-engine`.)
// Ports: P (the worker), P+10..P+12 (Portico), P+20..P+21 (SMG).

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { CLK_TCK, sampleTree } from '../compare/procfs.js';
import { runPorticoBench, type BenchFigures } from '../compare/bench-summary.js';
import { startPortico, startSmg, type Env, type Running } from '../compare/frontends.js';
import { startVllm, tinyQwen3Dir } from '../../test/helpers/vllm.js';
import type { Measures } from '../../src/bench/measures.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const { values } = parseArgs({
  options: {
    venv: { type: 'string', default: '/tmp/portico-compare-venv' },
    rounds: { type: 'string', default: '2' },
    port: { type: 'string', default: '29300' },
    rates: { type: 'string', default: '5,20' },
    duration: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '20' },
    'frontend-cpus': { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const basePort = Number(values.port);
const rates = values.rates.split(',').map(Number);
const durationS = Number(values.duration);
const warmup = Number(values.warmup);
const INPUT_TOKENS = 32;
const OUTPUT_TOKENS = 8;
const SEED = 1;
const MAX_IN_FLIGHT = 256;
const IDLE_S = 5;
const logDir = mkdtempSync(join(tmpdir(), 'portico-real-engine-'));

const loadArgs = (rate: number) => ['--rate', String(rate), '--max-concurrency', String(MAX_IN_FLIGHT), '--input-tokens', String(INPUT_TOKENS), '--output-tokens', String(OUTPUT_TOKENS), '--stream', '--seed', String(SEED)];

interface Cell {
  requests: number;
  failed: number;
  requestsPerS: number;
  /** Frontend CPU per served request, µs; null for the engine alone. */
  cpuUs: number | null;
  /** Frontend CPU while idle (after the warm-up, before the cell), ms per second. */
  idleCpuMsPerS: number | null;
  ttftP50: number;
  ttftP99: number;
  e2eP50: number;
  e2eP99: number;
  promptTokens: number;
  firstError?: string;
}

type Side = 'Portico' | 'SMG' | 'engine alone';
const cells = new Map<string, Cell[]>(); // `${side}@${rate}` → one per round
const add = (side: Side, rate: number, c: Cell) => cells.set(`${side}@${rate}`, [...(cells.get(`${side}@${rate}`) ?? []), c]);

function cellOf(f: BenchFigures, cpuUs: number, idleCpuMsPerS: number): Cell {
  if (f.ttftP50 === null || f.ttftP99 === null) throw new Error(`no TTFT measured (first error: ${f.firstError ?? 'none'})`);
  return { requests: f.requests, failed: f.failed, requestsPerS: f.requestsPerS, cpuUs, idleCpuMsPerS, ttftP50: f.ttftP50, ttftP99: f.ttftP99, e2eP50: f.e2eP50, e2eP99: f.e2eP99, promptTokens: f.promptTokens / Math.max(f.requests - f.failed, 1), ...(f.firstError ? { firstError: f.firstError } : {}) };
}

async function measureFrontend(fe: Running, rate: number): Promise<Cell> {
  await runPorticoBench(ROOT, fe.url, env.modelDir, [...loadArgs(rate), '--requests', String(warmup)]);
  const idle0 = sampleTree(fe.pid).cpuTicks;
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  const before = sampleTree(fe.pid).cpuTicks;
  const idleCpuMsPerS = ((before - idle0) / CLK_TCK) * 1000 / IDLE_S;
  const f = await runPorticoBench(ROOT, fe.url, env.modelDir, [...loadArgs(rate), '--duration', String(durationS)]);
  const cpuUs = ((sampleTree(fe.pid).cpuTicks - before) / CLK_TCK) * 1e6;
  return cellOf(f, cpuUs / Math.max(f.requests - f.failed, 1), idleCpuMsPerS);
}

/** The same arrivals straight to the engine (bench/real-engine/direct.ts), in a process on the frontends' CPUs. */
async function measureDirect(engineUrl: string, rate: number, promptTokens: number): Promise<Cell> {
  const args = [`${ROOT}dist/bench/real-engine/direct.js`, '--url', engineUrl, '--tokenizer', env.modelDir, '--rate', String(rate), '--duration', String(durationS), '--warmup', String(warmup), '--prompt-tokens', String(promptTokens), '--input-tokens', String(INPUT_TOKENS), '--output-tokens', String(OUTPUT_TOKENS), '--seed', String(SEED), '--max-concurrency', String(MAX_IN_FLIGHT)];
  const child = values['frontend-cpus'] ? spawn('taskset', ['-c', values['frontend-cpus'], process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] }) : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0) throw new Error(`engine alone: direct.js exited with ${code}`);
  const m = JSON.parse(out) as Measures;
  if (!m.ttftMs || !m.e2eMs) throw new Error(`engine alone: no request succeeded (first error: ${m.firstError ?? 'none'})`);
  return { requests: m.requests, failed: m.failed, requestsPerS: m.requestsPerS, cpuUs: null, idleCpuMsPerS: null, ttftP50: m.ttftMs.p50, ttftP99: m.ttftMs.p99, e2eP50: m.e2eMs.p50, e2eP99: m.e2eMs.p99, promptTokens, ...(m.firstError ? { firstError: m.firstError } : {}) };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f1 = (x: number) => x.toFixed(1);
const range = (xs: number[], fmt: (x: number) => string) => (xs.length > 1 ? `${fmt(mean(xs))} (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})` : fmt(xs[0]!));

function renderTable(load: string): string {
  const lines = [
    `Open loop, Poisson arrivals, ${durationS} s per cell after ${warmup} warm-up requests at the same rate; ${INPUT_TOKENS}-token user prompts (chat template on top), max_tokens ${OUTPUT_TOKENS}, ignore_eos, streamed. ${rounds} rounds, each Portico, SMG, engine alone; mean over rounds (range). Frontend CPU: its process tree's utime + stime over the cell / requests served; idle: the same over the 5 s before the cell, per second. TTFT overhead: the frontend's TTFT − the engine alone's (Portico's engine client, same arrivals, same prompt length). ${cpus().length} cores, ${load}.`,
    '',
    '| rate (req/s) | side | frontend CPU µs/request | idle frontend CPU ms/s | TTFT p50 ms | TTFT p99 ms | TTFT p50 overhead ms | e2e p50 ms | e2e p99 ms | served req/s | requests | errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const ratios: string[] = [];
  for (const rate of rates) {
    const direct = cells.get(`engine alone@${rate}`) ?? [];
    const directP50 = direct.length ? mean(direct.map((c) => c.ttftP50)) : null;
    const overheadOf = (side: Side) => (directP50 === null || !cells.get(`${side}@${rate}`) ? null : mean(cells.get(`${side}@${rate}`)!.map((c) => c.ttftP50)) - directP50);
    for (const side of ['Portico', 'SMG', 'engine alone'] as Side[]) {
      const cs = cells.get(`${side}@${rate}`);
      if (!cs) continue;
      const over = side === 'engine alone' ? '—' : overheadOf(side) === null ? 'n/a' : f1(overheadOf(side)!);
      const cpu = side === 'engine alone' ? '—' : range(cs.map((c) => c.cpuUs!), (x) => x.toFixed(0));
      const idle = side === 'engine alone' ? '—' : range(cs.map((c) => c.idleCpuMsPerS!), f1);
      lines.push(`| ${rate} | ${side} | ${cpu} | ${idle} | ${range(cs.map((c) => c.ttftP50), f1)} | ${range(cs.map((c) => c.ttftP99), f1)} | ${over} | ${range(cs.map((c) => c.e2eP50), f1)} | ${range(cs.map((c) => c.e2eP99), f1)} | ${f1(mean(cs.map((c) => c.requestsPerS)))} | ${cs.reduce((a, c) => a + c.requests, 0)} | ${cs.reduce((a, c) => a + c.failed, 0)} |`);
    }
    const p = cells.get(`Portico@${rate}`);
    const s = cells.get(`SMG@${rate}`);
    if (p && s) {
      const cpuRatio = mean(p.map((c) => c.cpuUs!)) / mean(s.map((c) => c.cpuUs!));
      const ttftRatio = mean(p.map((c) => c.ttftP50)) / mean(s.map((c) => c.ttftP50));
      ratios.push(`${rate} req/s: CPU/request ${cpuRatio.toFixed(2)}, TTFT p50 ${ttftRatio.toFixed(2)}`);
    }
  }
  lines.push('', `Portico/SMG, same run: ${ratios.join('; ')}.`);
  return `${lines.join('\n')}\n`;
}

const loadStart = loadavg()[0];
const modelDir = tinyQwen3Dir();
let env: Env;
// No prefix caching: the frontends send the same prompts in turn, and a cache would serve later ones cheaper.
const worker = await startVllm({ modelDir, name: 'qwen3', port: basePort, args: ['--no-enable-prefix-caching'] });
process.stderr.write(`vLLM worker ready on ${worker.url}; logs in ${logDir}\n`);
try {
  env = { root: ROOT, venv: values.venv, modelDir, worker: worker.url, logDir, cpus: values['frontend-cpus'], porticoArgs: ['--model-name', 'qwen3', '--shards', '1'] };
  const starters: [Side, (e: Env, port: number) => Promise<Running>, number][] = [
    ['Portico', startPortico, basePort + 10],
    ['SMG', startSmg, basePort + 20],
  ];
  for (let r = 0; r < rounds; r++) {
    for (const [side, startFe, port] of starters) {
      const fe = await startFe(env, port);
      try {
        for (const rate of rates) {
          const c = await measureFrontend(fe, rate);
          add(side, rate, c);
          process.stderr.write(`round ${r + 1} ${side} ${rate} req/s: ${c.requests} requests, ${c.failed} failed, ${c.cpuUs!.toFixed(0)} µs CPU/request, TTFT p50 ${f1(c.ttftP50)} ms, ${f1(c.promptTokens)} prompt tokens${c.firstError ? `, first error: ${c.firstError}` : ''}\n`);
        }
      } finally {
        await fe.stop();
      }
    }
    for (const rate of rates) {
      const promptTokens = Math.round(cells.get(`Portico@${rate}`)![0]!.promptTokens);
      const c = await measureDirect(worker.url, rate, promptTokens);
      add('engine alone', rate, c);
      process.stderr.write(`round ${r + 1} engine alone ${rate} req/s: ${c.requests} requests, ${c.failed} failed, TTFT p50 ${f1(c.ttftP50)} ms${c.firstError ? `, first error: ${c.firstError}` : ''}\n`);
    }
  }
} finally {
  await worker.kill();
  rmSync(modelDir, { recursive: true, force: true });
}
writeFileSync(join(logDir, 'cells.json'), `${JSON.stringify(Object.fromEntries(cells), null, 2)}\n`);
process.stdout.write(renderTable(`load average ${loadStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`));
const failed = [...cells.values()].flat().reduce((a, c) => a + c.failed, 0);
if (failed) process.exitCode = 1;
