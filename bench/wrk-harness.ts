// What the wrk-driven benches share: starting a `portico` subcommand (of this build or
// another) or a bench server and reading its port from its "listening on" line, a
// process's CPU time from /proc, a wrk POST script, and one wrk run read back (req/s,
// latency percentiles, request count; non-2xx fails).

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './serve-procs.js';

export { ROOT, QWEN3 } from './serve-procs.js';

export interface Started {
  child: ChildProcess;
  port: number;
}

/**
 * `node script ...args` (with PORTICO_SHARDS=1), resolved once it prints the port it listens
 * on ("listening on host:port" or "listening on grpc://host:port").
 */
export function startNode(script: string, args: string[] = [], nodeFlags: string[] = []): Promise<Started> {
  const command = [process.execPath, ...nodeFlags, script, ...args];
  const cpu = pinnedCpu(args[0] === 'engine' || args[0] === 'mock-engine' ? 'load' : 'frontend');
  if (cpu !== undefined) command.unshift('taskset', '-c', cpu);
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PORTICO_SHARDS: '1' } });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (?:[a-z+]+:\/\/)?[^:\s]+:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

/**
 * With BENCH_PIN=1 on a machine of two or more CPUs, the frontend under test (a `serve`, or
 * a bench server other than an engine) runs on CPU 0 and everything that loads it (engines,
 * `mock-engine`, wrk) on CPU 1, so what the
 * frontend's CPU per request measures is its own work, not its share of a contended core
 * (on a 2-core VM, same-build A/B runs unpinned differ by up to 1.5x).
 */
export function pinnedCpu(role: 'frontend' | 'load'): string | undefined {
  if (process.env.BENCH_PIN !== '1') return undefined;
  return role === 'frontend' ? '0' : '1';
}

/** `node <dir>/bin/portico.js ...args` (dir: a build of this repo, by default this one). */
export function startPortico(args: string[], dir = ROOT, nodeFlags: string[] = []): Promise<Started> {
  return startNode(`${dir}/bin/portico.js`, args, nodeFlags);
}

/**
 * SIGTERM each process in turn and wait for it to exit before the next: list frontends
 * before their engines, so a frontend draining what wrk left in flight never sees its
 * engine go away (that logs a 503 per such request).
 */
export async function stopInOrder(children: ChildProcess[]): Promise<void> {
  for (const c of children) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await gone;
  }
}

/** `portico mock-engine` flags that zero its timing model (echo otherwise paces tokens at --step-ms). */
export const ZERO_DELAY = ['--step-ms', '0', '--prefill-ms-per-token', '0', '--decode-ms-per-seq', '0', '--decode-ms-per-kv-token', '0'];

/** The machine's load, as `uptime` prints it. */
export function uptime(): string {
  return execFileSync('uptime', { encoding: 'utf8' }).trim();
}

/** utime + stime of a process, all threads, in ms (USER_HZ 100). */
export function cpuMsOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

// One temporary directory per bench process holds its wrk scripts; removed when it exits.
let scriptDir: string | undefined;
let scripts = 0;

/** A wrk script that POSTs `body` as JSON. */
export function postScript(body: object): string {
  if (scriptDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'portico-wrk-'));
    scriptDir = dir;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  const file = join(scriptDir, `post-${scripts++}.lua`);
  writeFileSync(file, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${JSON.stringify(JSON.stringify(body))}\n`);
  return file;
}

export interface WrkRun {
  rps: number;
  p50: string;
  p99: string;
  requests: number;
}

/** CPU (user + system, ms) of this process's children that have been waited for: wrk's, around a run. */
export function childrenCpuMs(): number {
  const f = readFileSync('/proc/self/stat', 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

/** One wrk run (-t1 --latency) against `url`; throws when any response was not 2xx/3xx. */
export function wrk(url: string, o: { connections: number; seconds: number; script?: string }): WrkRun {
  const args = ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--latency'];
  if (o.script) args.push('-s', o.script);
  const cpu = pinnedCpu('load');
  const out = cpu === undefined ? execFileSync('wrk', [...args, url], { encoding: 'utf8' }) : execFileSync('taskset', ['-c', cpu, 'wrk', ...args, url], { encoding: 'utf8' });
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (errors) throw new Error(`wrk saw ${errors[1]} non-2xx responses on ${url}`);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    p50: /^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '?',
    p99: /^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '?',
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN),
  };
}

/**
 * wrk against each server in turn, round after round (the order reversed every other round so
 * neither side always follows the other), a 2 s warm-up before each measured run; prints a
 * table row per run and returns each server's frontend CPU per request, one per round.
 */
export function wrkRounds(servers: { name: string; port: number; child: ChildProcess }[], rounds: number, o: { connections: number; seconds: number; script: string }): Record<string, number[]> {
  const perReq: Record<string, number[]> = Object.fromEntries(servers.map((s) => [s.name, []]));
  for (let r = 1; r <= rounds; r++) {
    for (const s of r % 2 ? servers : [...servers].reverse()) {
      const url = `http://127.0.0.1:${s.port}/v1/chat/completions`;
      wrk(url, { connections: o.connections, seconds: 2, script: o.script });
      const c0 = cpuMsOf(s.child.pid!);
      const w = wrk(url, o);
      const us = ((cpuMsOf(s.child.pid!) - c0) * 1000) / w.requests;
      perReq[s.name]!.push(us);
      console.log(`| ${r} | ${s.name} | ${Math.round(w.rps)} | ${w.p50} | ${w.p99} | ${Math.round(us)} µs |`);
    }
  }
  return perReq;
}

/** The median of a server's rounds. */
export const medianOf = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
