// Loads the napi-rs addon (native/node → native/node/portico_native.node) once; core.ts
// and parsers.ts type the parts they use.

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Where the built addon lives: `npm run build:native` writes native/node/portico_native.node. */
function addonPath(): string {
  const override = process.env.PORTICO_NATIVE_CORE;
  if (override) return override;
  const candidates = [
    // compiled: dist/src/native/*.js -> repo root is three levels up
    new URL('../../../native/node/portico_native.node', import.meta.url),
    // run from source (src/native/*.ts with a TS loader): two levels up
    new URL('../../native/node/portico_native.node', import.meta.url),
  ].map((u) => fileURLToPath(u));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`Portico native core is not built: run \`npm run build:native\` (looked for ${candidates[0]})`);
  return found;
}

export const nativeAddon: unknown = createRequire(import.meta.url)(addonPath());
