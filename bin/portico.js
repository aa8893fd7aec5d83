#!/usr/bin/env node
// The portico command: runs the compiled CLI (npm install builds it into dist/).
import { setFlagsFromString } from 'node:v8';

// V8's allocation-site pretenuring sees a request's objects (built at request start, alive
// across the engine round trip) survive scavenges and starts allocating them in the old
// generation; dead old objects then keep the young ones they point to alive through every
// scavenge until the next full GC, so a serving process promotes ~6 KB per request and
// spends ~23 us of each unary chat in scavenges. Off: about half of both (bench/chat-gc-ab.bench.ts;
// docs/architecture.md "Found: V8's allocation-site pretenuring"). Process-wide, so
// the shard threads get it too; set before any request-handling code has run.
setFlagsFromString('--no-allocation-site-pretenuring');

const { main } = await import('../dist/src/cli/main.js');
const code = await main(process.argv.slice(2));
if (code !== 0) process.exit(code);
