// The TCP ports a process listens on, read from the kernel (/proc, with the parser the
// port guard uses): what a test checks to know that a server opened no port it was not
// asked for. Linux only, as the tests' other servers (etcd, nats-server) are.

import { socketInodes, tcpListeners } from '../../src/http/port-guard.js';

/** The ports process `pid` has a listening TCP socket on (IPv4 or IPv6), sorted, each once. */
export function listeningPorts(pid: number): number[] {
  const own = socketInodes(pid);
  const ports = new Set(tcpListeners().filter((l) => own.has(l.inode)).map((l) => l.port));
  return [...ports].sort((a, b) => a - b);
}
