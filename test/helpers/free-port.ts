// A port the kernel says is free now (bound on port 0, then released), for servers
// that must come back on the same port after a restart (etcd, nats-server).

import { createServer } from 'node:net';

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
