// A real etcd server for a test: free ports, a temp data dir, stop and restart on the
// same ports (and data) for the reconnect cases. CI installs it (apt etcd-server).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

const BIN = process.env.ETCD_BIN ?? 'etcd';

export interface EtcdServer {
  /** etcd://127.0.0.1:PORT, as `--discovery` takes it. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stop and delete the data dir. */
  destroy(): Promise<void>;
  output(): string;
}

function assertInstalled(): void {
  const r = spawnSync(BIN, ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`etcd is not installed (${BIN}): install the Debian package etcd-server (apt-get install etcd-server etcd-client)`);
}

export async function startEtcd(): Promise<EtcdServer> {
  assertInstalled();
  const dir = mkdtempSync(join(tmpdir(), 'portico-etcd-'));
  const port = await freePort();
  const peer = await freePort();
  let child: ChildProcess | null = null;
  let out = '';
  const start = async () => {
    const args = [
      '--name', 'test', '--data-dir', join(dir, 'data'),
      '--listen-client-urls', `http://127.0.0.1:${port}`, '--advertise-client-urls', `http://127.0.0.1:${port}`,
      '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
      '--initial-cluster', `test=http://127.0.0.1:${peer}`, '--log-level', 'warn',
    ];
    const c = spawn(BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    // Ready when the client port answers /health.
    const end = Date.now() + 30_000;
    for (;;) {
      if (c.exitCode !== null) throw new Error(`etcd exited with ${c.exitCode}:\n${out}`);
      try {
        const r = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
        if (r.ok && ((await r.json()) as { health?: string }).health === 'true') return;
      } catch {
        /* not up yet */
      }
      if (Date.now() > end) throw new Error(`etcd did not become healthy:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    c.kill('SIGKILL');
    await once(c, 'exit');
  };
  await start();
  return {
    url: `etcd://127.0.0.1:${port}`,
    port,
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    output: () => out,
  };
}
