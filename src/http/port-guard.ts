// A taken port is an error. uSockets listens with SO_REUSEPORT on Linux (so that a
// process's shards can share a port), which would also let a second `portico serve`
// bind beside the first and have the kernel split connections between the two. Portico
// shares a port only among its own shards:
//
//  1. before any uWS app listens, the main thread binds the address once with node:net
//     (no SO_REUSEPORT): in use → a clear error naming the port;
//  2. a single-shard server listens with LIBUS_LISTEN_EXCLUSIVE_PORT, so nothing can join
//     it later either;
//  3. once every shard listens, the main thread checks the kernel's table of listening
//     sockets (/proc/net/tcp, tcp6) for one on the port that is not this process's: that
//     closes the window between 1 and the shards' listen, where two servers started at the
//     same moment would both pass 1.

import { createServer } from 'node:net';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

export class PortInUseError extends Error {}

function inUse(host: string, port: number, detail: string): PortInUseError {
  return new PortInUseError(`port ${port} is already in use on ${host} (${detail}); stop the other server or choose another --http-port`);
}

/** Bind `host:port` once without SO_REUSEPORT and let go: rejects with PortInUseError when another socket holds it. */
export function probePort(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', (err: NodeJS.ErrnoException) => {
      reject(err.code === 'EADDRINUSE' ? inUse(host, port, 'another process listens on it') : err);
    });
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve()));
  });
}

/**
 * Throw PortInUseError when a socket listening on `port` at an address overlapping
 * `host` belongs to another process. Linux only (elsewhere uSockets does not share ports
 * this way); a no-op where /proc cannot be read.
 */
export function assertSoleListener(host: string, port: number): void {
  if (process.platform !== 'linux') return;
  let own: Set<string>;
  try {
    own = socketInodes('self');
  } catch {
    return;
  }
  for (const l of tcpListeners()) {
    if (l.port !== port || own.has(l.inode)) continue;
    if (overlaps(host, l.addrHex)) throw inUse(host, port, 'another process listens on it beside this one');
  }
}

/** A listening TCP socket in the kernel's tables: its address (/proc's hex form), port and inode. */
export interface TcpListener {
  addrHex: string;
  port: number;
  inode: string;
}

/** Every listening TCP socket (IPv4 and IPv6) of this network namespace; tables that cannot be read are skipped. */
export function tcpListeners(): TcpListener[] {
  const out: TcpListener[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let table: string;
    try {
      table = readFileSync(file, 'latin1');
    } catch {
      continue;
    }
    for (const line of table.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A') continue; // 0A: LISTEN
      const [addrHex, portHex] = f[1]!.split(':');
      out.push({ addrHex: addrHex!, port: parseInt(portHex!, 16), inode: f[9]! });
    }
  }
  return out;
}

/** The socket inodes of process `pid`'s open file descriptors. */
export function socketInodes(pid: number | 'self'): Set<string> {
  const out = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.add(m[1]!);
    } catch {
      /* closed meanwhile */
    }
  }
  return out;
}

/** Whether a listener at `addrHex` (/proc's hex form) takes connections for `host`. */
function overlaps(host: string, addrHex: string): boolean {
  const wildcard = /^0+$/.test(addrHex);
  if (wildcard || host === '0.0.0.0' || host === '::') return true;
  if (addrHex.length === 8) {
    // IPv4, little-endian bytes.
    const ip = [6, 4, 2, 0].map((i) => parseInt(addrHex.slice(i, i + 2), 16)).join('.');
    return ip === host;
  }
  return false;
}

/** A port the kernel says is free now (bound on port 0, then released). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => done(port));
    });
  });
}
