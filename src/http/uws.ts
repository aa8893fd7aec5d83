// Load uWebSockets.js's native binary directly. The package quietly falls back to a
// slow pure-JavaScript server when its binary does not load; Portico refuses to run
// on that fallback, so a broken install fails loudly at startup instead.

import { createRequire } from 'node:module';
import type * as UWS from '@trufflesuite/uws-js-unofficial';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';

const require = createRequire(import.meta.url);

function loadNative(): typeof UWS {
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const path = `@trufflesuite/uws-js-unofficial/binaries/${file}`;
  let mod: typeof UWS;
  try {
    mod = require(path) as typeof UWS;
  } catch (err) {
    throw new Error(
      `uWebSockets.js native binary ${file} failed to load (${(err as Error).message}); ` +
        'Portico does not run on the slow JavaScript fallback',
    );
  }
  if (typeof mod.App !== 'function' || typeof mod.us_socket_local_port !== 'function') {
    throw new Error(`uWebSockets.js binary ${file} does not export the native App API`);
  }
  return mod;
}

export const uws = loadNative();
