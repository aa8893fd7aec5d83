#!/usr/bin/env bash
# Rebuilds the parts of an installed tree that are tied to one Node.js ABI — better-sqlite3
# and uWebSockets.js (native/uws) — for the Node whose binary is given, against that Node's
# own headers (<prefix>/include/node). The napi-rs addon and the request gate are N-API and
# serve every Node as they are. Builds for other ABIs stay: native/uws keeps one binary per
# ABI; better-sqlite3 keeps one, the last built.
# Usage: scripts/rebuild-for-node.sh /path/to/bin/node
set -euo pipefail
NODE_BIN="$(readlink -f "$1")"
PREFIX="$(dirname "$(dirname "$NODE_BIN")")"
if [ ! -f "$PREFIX/include/node/node_version.h" ]; then
  echo "rebuild-for-node: no Node headers in $PREFIX/include/node" >&2
  exit 1
fi
cd "$(dirname "$0")/.."
export PATH="$(dirname "$NODE_BIN"):$PATH" npm_config_nodedir="$PREFIX"
echo "rebuilding better-sqlite3 and uWebSockets.js for Node $(node --version)"
npm rebuild better-sqlite3 --no-audit --no-fund
node native/uws/build.mjs
