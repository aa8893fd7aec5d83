// Cost of the request-framing check every POST now pays (src/http/body-reader.ts
// framingOf), on the headers a typical client sends.
//
// Usage: npm run build:ts && node dist/bench/framing.bench.js [rounds=5] [calls=2000000]

import { framingOf } from '../src/http/body-reader.js';

const rounds = Number(process.argv[2] ?? 5);
const calls = Number(process.argv[3] ?? 2_000_000);
// As uWS hands them: lower-cased names, alternating with values (8 headers).
const headers = ['host', '127.0.0.1:8000', 'user-agent', 'python-requests/2.32', 'accept-encoding', 'gzip, deflate', 'accept', '*/*', 'connection', 'keep-alive', 'content-type', 'application/json', 'content-length', '187', 'authorization', 'Bearer sk-xxxxxxxx'];
let sink = 0;
for (let r = 1; r <= rounds; r++) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    const f = framingOf(headers, 45 * 1024 * 1024);
    if (f.ok) sink += f.length ?? 0;
  }
  console.log(`round ${r}: ${(Number(process.hrtime.bigint() - t0) / calls).toFixed(1)} ns per framingOf (8 headers)`);
}
if (sink === 0) console.log('(no body length seen)');
