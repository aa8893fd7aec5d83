// What the wrk-driven benches share: starting a `portico` subcommand and reading its
// port from its "listening on" line, a process's CPU time from /proc, a wrk POST script,
// and one wrk run read back (req/s, latency percentiles, request count; non-2xx fails).

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './serve-procs.js';

export { ROOT, QWEN3 } from './serve-procs.js';

/** `node bin/portico.js ...args`, resolved once it prints the port it listens on. */
export function startPortico(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`${ROOT}bin/portico.js`, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on \S+:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

/** utime + stime of a process, all threads, in ms (USER_HZ 100). */
export function cpuMsOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** A wrk script that POSTs `body` as JSON. */
export function postScript(body: object): string {
  const file = join(mkdtempSync(join(tmpdir(), 'portico-wrk-')), 'post.lua');
  writeFileSync(file, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${JSON.stringify(JSON.stringify(body))}\n`);
  return file;
}

export interface WrkRun {
  rps: number;
  p50: string;
  p99: string;
  requests: number;
}

/** One wrk run (-t1 --latency) against `url`; throws when any response was not 2xx/3xx. */
export function wrk(url: string, o: { connections: number; seconds: number; script?: string }): WrkRun {
  const args = ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--latency'];
  if (o.script) args.push('-s', o.script);
  const out = execFileSync('wrk', [...args, url], { encoding: 'utf8' });
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (errors) throw new Error(`wrk saw ${errors[1]} non-2xx responses on ${url}`);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    p50: /^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '?',
    p99: /^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '?',
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN),
  };
}
