// A real etcd server for a test: free ports, a temp data dir, stop and restart on the
// same ports (and data) for the reconnect cases. CI installs it (apt etcd-server).

import { join } from 'node:path';
import { freePort } from './free-port.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

export interface EtcdServer extends ServerProcess {
  /** etcd://127.0.0.1:PORT, as `--discovery` takes it. */
  readonly url: string;
  readonly port: number;
}

/** Ready when the client port answers /health. */
async function healthy(port: number): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
    return r.ok && ((await r.json()) as { health?: string }).health === 'true';
  } catch {
    return false;
  }
}

export async function startEtcd(): Promise<EtcdServer> {
  const port = await freePort();
  const peer = await freePort();
  const server = await startServerProcess({
    name: 'etcd',
    bin: process.env.ETCD_BIN ?? 'etcd',
    packages: 'etcd-server etcd-client',
    args: (dir) => [
      '--name', 'test', '--data-dir', join(dir, 'data'),
      '--listen-client-urls', `http://127.0.0.1:${port}`, '--advertise-client-urls', `http://127.0.0.1:${port}`,
      '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
      '--initial-cluster', `test=http://127.0.0.1:${peer}`, '--log-level', 'warn',
    ],
    ready: () => healthy(port),
  });
  return { ...server, url: `etcd://127.0.0.1:${port}`, port };
}
