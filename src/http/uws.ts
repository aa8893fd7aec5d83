// Load Portico's build of uWebSockets.js (native/uws, compiled at install from pinned registry
// sources for the running Node; see uws-path.ts). There is no JavaScript fallback: a missing
// or broken build fails loudly at startup.

import { createRequire } from 'node:module';
import type * as UWS from 'uwebsockets';
import { uwsBinaryPath } from './uws-path.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uwebsockets';

function loadNative(): typeof UWS {
  const path = uwsBinaryPath();
  let mod: typeof UWS;
  try {
    mod = createRequire(import.meta.url)(path) as typeof UWS;
  } catch (err) {
    throw new Error(
      `uWebSockets.js for Node ${process.version} (${path}) failed to load (${(err as Error).message}); ` +
        'build it with `node native/uws/build.mjs` under this Node',
    );
  }
  if (typeof mod.App !== 'function' || typeof mod.us_socket_local_port !== 'function') {
    throw new Error(`uWebSockets.js binary ${path} does not export the native App API`);
  }
  return mod;
}

export const uws = loadNative();
