// A real nats-server (JetStream on) for a test: a free port, a temp store dir, stop
// and restart on the same port and store for the reconnect cases. CI installs it (apt
// nats-server).

import { connect } from 'node:net';
import { freePort } from './free-port.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

export interface NatsServer extends ServerProcess {
  /** nats://127.0.0.1:PORT, as `--event-plane` takes it. */
  readonly url: string;
  readonly port: number;
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
  const port = await freePort();
  const server = await startServerProcess({
    name: 'nats-server',
    bin: process.env.NATS_SERVER_BIN ?? 'nats-server',
    packages: 'nats-server',
    args: (dir) => ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir],
    // JetStream is ready a moment after the client port opens.
    ready: async (out) => (await answers(port)) && /Server is ready/.test(out()),
  });
  return { ...server, url: `nats://127.0.0.1:${port}`, port };
}
