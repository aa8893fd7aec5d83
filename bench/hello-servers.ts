// Baseline servers for bench/http.bench.ts and bench/floor.bench.ts: the smallest uWS app
// (the ceiling Portico's HTTP layer works under) and Node's own http module, each answering a
// fixed body. The uWS app also takes POSTs: it copies the body out, then answers the same.
// Usage: node dist/bench/hello-servers.js uws|node PORT (0: any free port; the one taken is printed)

import { createServer } from 'node:http';
import { uws } from '../src/http/uws.js';
import { readBody } from './uws-body.js';

const [kind, portArg] = process.argv.slice(2);
const port = Number(portArg);
const BODY = '{"object":"list","data":[]}';

if (kind === 'uws') {
  uws
    .App()
    .get('/*', (res) => {
      res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(BODY));
    })
    .post('/*', (res) => {
      readBody(res, () => res.cork(() => res.writeHeader('content-type', 'application/json').end(BODY)));
    })
    .listen('127.0.0.1', port, (ls) => {
      if (!ls) process.exit(1);
      console.log(`listening on 127.0.0.1:${uws.us_socket_local_port(ls)}`);
    });
} else {
  createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(BODY);
  }).listen(port, '127.0.0.1', function (this: ReturnType<typeof createServer>) {
    console.log(`listening on 127.0.0.1:${(this.address() as { port: number }).port}`);
  });
}
