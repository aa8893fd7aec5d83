// A real PostgreSQL server for one test file (Debian's `postgresql` package): initdb in a
// temp dir, postgres on a free loopback port, trust auth for a `portico` superuser. As root
// (CI), both run as the `postgres` user (they refuse root), in a dir it owns.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';

const BIN = process.env.PORTICO_PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface Postgres {
  readonly url: string;
  /** Shut the server down (fast shutdown), keeping its data directory and port for resume(). */
  halt(): Promise<void>;
  /** Start it again on the same data directory and port (after halt()). */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** As root: the postgres user's uid and gid (the child runs as it, so signals reach postgres itself). */
function dbUser(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error('running as root, but there is no postgres user to run PostgreSQL as (the Debian package "postgresql" creates it)');
  return { uid, gid };
}

export async function startPostgres(): Promise<Postgres> {
  if (!existsSync(join(BIN, 'initdb')) || !existsSync(join(BIN, 'postgres'))) {
    throw new Error(`PostgreSQL binaries not found in ${BIN}: install the Debian package "postgresql" (apt-get install postgresql; .ci/run's APT_PACKAGES has it)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'portico-pg-'));
  const user = dbUser();
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const init = spawnSync(join(BIN, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'portico', '--no-sync', '-E', 'UTF8'], { encoding: 'utf8', cwd: dir, ...user });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    const c: ChildProcess = spawn(join(BIN, 'postgres'), ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir, ...user });
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        c.kill('SIGKILL');
        reject(new Error(`postgres did not start (hang guard):\n${log}`));
      }, 60_000);
      const onData = (d: Buffer) => {
        log += d.toString();
        if (log.includes('ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      c.stdout!.on('data', onData);
      c.stderr!.on('data', onData);
      c.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`postgres exited with ${code}:\n${log}`));
      });
    });
    child = c;
  };
  const halt = async () => {
    const c = child;
    child = undefined;
    if (c && c.exitCode === null && c.signalCode === null) {
      c.kill('SIGINT'); // fast shutdown
      await once(c, 'exit');
    }
  };
  await launch();
  return {
    url: `postgres://portico@127.0.0.1:${port}/postgres`,
    halt,
    resume: launch,
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
