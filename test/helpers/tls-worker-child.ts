// Child process of test/engine-tls.test.ts (a child, because NODE_EXTRA_CA_CERTS, which makes
// the test certificate trusted, is read only at startup): a TLS worker on 127.0.0.1 and the
// engine client's HTTP/2 client calling it once; prints one JSON line with what it got.
//   argv[2]: 'h2' (an HTTP/2 gRPC worker) or 'no-alpn' (TLS that negotiates no protocol)
//   argv[3]: the host name the client uses ('localhost' or '127.0.0.1')
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';

import { ConnectError } from '@connectrpc/connect';

import { frameMessage, GRPC_REQUEST_HEADERS, openServerStream } from '../../src/engine/grpc-h2.js';
import { H2Client } from '../../src/engine/h2/client.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/tls/', import.meta.url));
const [mode, host = 'localhost'] = process.argv.slice(2);
// (Without arguments, as when `node --test dist/test/` loads every file under test/, it does nothing.)
if (mode === 'h2' || mode === 'no-alpn') await main(mode, host);

async function main(mode: string, host: string): Promise<void> {
  const key = readFileSync(`${FIXTURES}worker.key`);
  const cert = readFileSync(`${FIXTURES}worker.crt`);

  let server: tls.Server;
  if (mode === 'no-alpn') {
    server = tls.createServer({ key, cert }, (s) => s.on('data', () => undefined));
  } else {
    const h2 = http2.createSecureServer({ key, cert });
    h2.on('stream', (st, headers) => {
      st.on('data', () => undefined);
      st.on('end', () => {
        st.respond({ ':status': 200, 'content-type': 'application/grpc+proto' }, { waitForTrailers: true });
        st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
        st.end(Buffer.concat([frameMessage(Buffer.from('one')), frameMessage(Buffer.from(String(headers[':scheme'])))]));
      });
    });
    server = h2;
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;

  const client = new H2Client(`https://${host}:${port}`, {
    connectTimeoutMs: 5000, pingIntervalMs: 10_000, pingTimeoutMs: 5000, idleConnectionTimeoutMs: 60_000, headers: GRPC_REQUEST_HEADERS,
  });
  const stream = openServerStream(client, '/sglang.grpc.scheduler.SglangScheduler/Generate', frameMessage(Buffer.from('req')), (b, s, e) => Buffer.from(b.subarray(s, e)).toString());
  const messages: string[] = [];
  let error: { code: number; message: string } | null = null;
  try {
    for (;;) {
      const r = await stream.next();
      if (r.done) break;
      messages.push(r.value);
    }
  } catch (err) {
    const ce = ConnectError.from(err);
    error = { code: ce.code, message: ce.message };
  }
  process.stdout.write(`${JSON.stringify({ messages, error })}\n`);
  client.close(new ConnectError('done'));
  server.close();
  process.exit(0);
}
