// Baseline servers for bench/http.bench.ts: the smallest uWS app (the ceiling Portico's
// HTTP layer works under) and Node's own http module, each answering a fixed body.
// Usage: node dist/bench/hello-servers.js uws|node PORT

import { createServer } from 'node:http';
import { uws } from '../src/http/uws.js';

const [kind, portArg] = process.argv.slice(2);
const port = Number(portArg);
const BODY = '{"object":"list","data":[]}';

if (kind === 'uws') {
  uws
    .App()
    .get('/*', (res) => {
      res.cork(() => res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(BODY));
    })
    .listen('127.0.0.1', port, (ok) => {
      if (!ok) process.exit(1);
      console.log(`listening on 127.0.0.1:${port}`);
    });
} else {
  createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(BODY);
  }).listen(port, '127.0.0.1', () => console.log(`listening on 127.0.0.1:${port}`));
}
