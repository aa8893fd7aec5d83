// The request body of a uWS POST, copied out of uWS's buffers, for the bench servers
// (hello-servers.ts, floor-servers.ts). `done` is not called when the client went away.

import type { HttpResponse } from '../src/http/uws.js';

export function readBody(res: HttpResponse, done: (body: Buffer, aborted: () => boolean) => void): void {
  let gone = false;
  res.onAborted(() => {
    gone = true;
  });
  const chunks: Buffer[] = [];
  res.onData((chunk, last) => {
    chunks.push(Buffer.from(chunk.slice(0))); // uWS reuses the chunk's memory
    if (last && !gone) done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), () => gone);
  });
}
