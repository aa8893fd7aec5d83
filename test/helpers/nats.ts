// A real nats-server (JetStream on) for a test: a free port, a temp store dir, stop
// and restart on the same port and store for the reconnect cases. CI installs it (apt
// nats-server).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { freePort } from './free-port.js';

const BIN = process.env.NATS_SERVER_BIN ?? 'nats-server';

export interface NatsServer {
  /** nats://127.0.0.1:PORT, as `--event-plane` takes it. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
  output(): string;
}

function assertInstalled(): void {
  const r = spawnSync(BIN, ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`nats-server is not installed (${BIN}): install the Debian package nats-server (apt-get install nats-server)`);
}

/** The server's INFO line arrives on a fresh connection once it accepts clients. */
function answers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = connect(port, '127.0.0.1');
    s.once('data', (d) => {
      s.destroy();
      done(d.toString().startsWith('INFO'));
    });
    s.once('error', () => done(false));
  });
}

export async function startNats(): Promise<NatsServer> {
  assertInstalled();
  const dir = mkdtempSync(join(tmpdir(), 'portico-nats-'));
  const port = await freePort();
  let child: ChildProcess | null = null;
  let out = '';
  const start = async () => {
    const c = spawn(BIN, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const end = Date.now() + 30_000;
    while (!(await answers(port))) {
      if (c.exitCode !== null) throw new Error(`nats-server exited with ${c.exitCode}:\n${out}`);
      if (Date.now() > end) throw new Error(`nats-server did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // JetStream is ready a moment after the client port opens.
    while (!/Server is ready/.test(out)) {
      if (Date.now() > end) throw new Error(`nats-server not ready:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    out = '';
    c.kill('SIGKILL');
    await once(c, 'exit');
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
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
