// The lifecycle the real servers of the tests share (etcd, nats-server): a binary that must
// be installed, a temp data dir, start / stop / restart on the same ports and data (the
// reconnect cases), and a readiness probe. A server that never becomes ready is killed
// before the error is thrown, so a child's pipes never keep a test file (and CI) alive.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ServerProcess {
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stop and delete the data dir. */
  destroy(): Promise<void>;
  output(): string;
}

export interface ServerSpec {
  /** What the errors call it, e.g. 'etcd'. */
  name: string;
  bin: string;
  /** Debian packages that provide it, for the "not installed" message. */
  packages: string;
  args(dir: string): string[];
  /** Resolves once the server accepts clients; `out` is everything it printed so far. */
  ready(out: () => string): Promise<boolean>;
}

const READY_WITHIN_MS = 60_000;

export function assertInstalled(bin: string, packages: string): void {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`${bin} is not installed: install the Debian package(s) ${packages} (apt-get install ${packages}; .ci/run's APT_PACKAGES has them)`);
}

export async function startServerProcess(spec: ServerSpec): Promise<ServerProcess> {
  assertInstalled(spec.bin, spec.packages);
  const dir = mkdtempSync(join(tmpdir(), `portico-${spec.name}-`));
  let child: ChildProcess | null = null;
  let out = '';
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    c.kill('SIGKILL');
    await once(c, 'exit');
  };
  const start = async () => {
    out = '';
    const c = spawn(spec.bin, spec.args(dir), { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    // A backstop for a server that hangs, not a window a loaded machine could miss.
    const end = Date.now() + READY_WITHIN_MS;
    while (!(await spec.ready(() => out))) {
      if (c.exitCode !== null) throw new Error(`${spec.name} exited with ${c.exitCode}:\n${out}`);
      if (Date.now() > end) {
        await stop();
        throw new Error(`${spec.name} was not ready in ${READY_WITHIN_MS / 1000} s:\n${out}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await start();
  return {
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    output: () => out,
  };
}
