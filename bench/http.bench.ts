// HTTP throughput with wrk on loopback, all measured in one run so the ratios compare
// like with like: the uWS hello-world ceiling, Node's http module, Portico's
// GET /v1/models, and Portico's full chat path (gate, template, tokenizer, gRPC to the
// echo engines, detokenizer) for a short non-streaming request and a streaming one.
//
// Chat rows: 1 output token (the unary figure of the journal) and 8, with the echo engines in Portico's
// process (--mock echo) and, for max_tokens 1, a `portico mock-engine` in its own process.
// Portico runs one shard; its CPU per request comes from /proc.
//
// Usage: npm run build:ts && node dist/bench/http.bench.js [seconds=5] [connections=64]
// Needs `wrk` (Debian package). Every load targets 127.0.0.1 and stops by itself.

import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

import { cpuMsOf, postScript, QWEN3, ROOT, startNode, startPortico, wrk as runWrk, ZERO_DELAY } from './wrk-harness.js';

const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 64);

type Row = { rps: number; p50: string; p99: string; cpuUs?: number; engineCpuUs?: number };

/** wrk against a Portico process, with the CPU it (and its out-of-process engine) spent per request. */
function wrkCpu(pid: number, url: string, script?: string, enginePid?: number): Row {
  wrk(url, script, 2); // warm-up
  const s0 = cpuMsOf(pid);
  const e0 = enginePid ? cpuMsOf(enginePid) : 0;
  const r = runWrk(url, { connections, seconds, script });
  const row: Row = { rps: r.rps, p50: r.p50, p99: r.p99, cpuUs: ((cpuMsOf(pid) - s0) * 1000) / r.requests };
  if (enginePid) row.engineCpuUs = ((cpuMsOf(enginePid) - e0) * 1000) / r.requests;
  return row;
}

function wrk(url: string, script?: string, secs = seconds): Row {
  return runWrk(url, { connections, seconds: secs, script });
}

const rows: [string, Row][] = [];
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loadStart = load();

const hello = await startNode(`${ROOT}dist/bench/hello-servers.js`, ['uws', '0']);
rows.push(['uWS hello world (GET)', wrk(`http://127.0.0.1:${hello.port}/`)]);
hello.child.kill();
const node = await startNode(`${ROOT}dist/bench/hello-servers.js`, ['node', '0']);
rows.push(['node:http hello world (GET)', wrk(`http://127.0.0.1:${node.port}/`)]);
node.child.kill();

const serve = (extra: string[]) => startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--shards', '1', ...extra]);
const chat = { model: 'm', messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: 'Say hello in five words.' }], max_tokens: 8 };
const chat1 = { ...chat, max_tokens: 1 };

// Engines in Portico's process (they share its thread).
const portico = await serve(['--mock', 'echo', '--mock-workers', '1']);
const pid = portico.child.pid!;
const base = `http://127.0.0.1:${portico.port}`;
// Warm the chat path up first (JIT): on a loaded machine the first measured row paid for it.
const warm = (b: string) => {
  wrk(`${b}/v1/chat/completions`, postScript(chat1), 4);
  wrk(`${b}/v1/chat/completions`, postScript(chat), 4);
};
warm(base);
rows.push(['Portico GET /v1/models', wrkCpu(pid, `${base}/v1/models`)]);
rows.push(['Portico chat, 1 token, unary, engine in process', wrkCpu(pid, `${base}/v1/chat/completions`, postScript(chat1))]);
rows.push(['Portico chat, 8 tokens, unary, engine in process', wrkCpu(pid, `${base}/v1/chat/completions`, postScript(chat))]);
rows.push(['Portico chat, 8 tokens, stream, engine in process', wrkCpu(pid, `${base}/v1/chat/completions`, postScript({ ...chat, stream: true }))]);
portico.child.kill();

// The engine as its own process (`portico mock-engine`), as in production; its timing model
// is zeroed (the CLI's echo mode otherwise paces tokens at --step-ms, 10 ms by default).
const engine = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--mode', 'echo', ...ZERO_DELAY]);
const remote = await serve(['--worker', `grpc://127.0.0.1:${engine.port}`]);
const rbase = `http://127.0.0.1:${remote.port}`;
warm(rbase);
rows.push(['Portico chat, 1 token, unary, engine out of process', wrkCpu(remote.child.pid!, `${rbase}/v1/chat/completions`, postScript(chat1), engine.child.pid!)]);
rows.push(['Portico chat, 8 tokens, unary, engine out of process', wrkCpu(remote.child.pid!, `${rbase}/v1/chat/completions`, postScript(chat), engine.child.pid!)]);
remote.child.kill();
engine.child.kill();

const ceiling = rows[0][1].rps;
console.log(`\n${cpus().length} cores (${cpus()[0].model}), Node ${process.version}, wrk -t1 -c${connections} -d${seconds}s (Portico: 4 s of each chat body, then 2 s before each row, as warm-up); load average ${loadStart} at the start, ${load()} at the end\n`);
console.log('| target | req/s | vs uWS hello | p50 | p99 | Portico CPU per request | engine CPU per request |\n|---|---:|---:|---:|---:|---:|---:|');
const us = (x?: number) => (x === undefined ? '' : `${x.toFixed(0)} µs`);
for (const [name, r] of rows) console.log(`| ${name} | ${r.rps.toFixed(0)} | ${(r.rps / ceiling).toFixed(3)} | ${r.p50} | ${r.p99} | ${us(r.cpuUs)} | ${us(r.engineCpuUs)} |`);
process.exit(0);
