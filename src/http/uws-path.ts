// Where Portico's build of uWebSockets.js for the running Node lives: native/uws/build.mjs
// writes one binary per Node ABI, native/uws/lib/uws_<platform>_<arch>_<abi>.node.

import { fileURLToPath } from 'node:url';

/** The binary for this process's Node (compiled: dist/src/http/uws-path.js → repo root three levels up). */
export function uwsBinaryPath(): string {
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  return fileURLToPath(new URL(`../../../native/uws/lib/${file}`, import.meta.url));
}
