#!/usr/bin/env bash
# `npm run bench:compare`: Portico against SGLang's gateway (PyPI smg) and NVIDIA Dynamo's
# frontend 1.6.1 on this machine, in one interleaved run; the table replaces the one in
# bench/RESULTS.md. Then the deployment shape (bench/compare/deploy-shape.ts: each frontend
# alone on CPU 0, load and engine on CPU 1, open-loop rates), whose table replaces its own.
# PARTS=compare or PARTS=deploy runs one of the two. Not run by CI (minutes of load).
# Ports: PORT (default 28040) .. PORT+31, DEPLOY_PORT (default 28100) .. DEPLOY_PORT+41.
#
# The venv: smg as is; ai-dynamo 1.6.1 and ai-dynamo-runtime with --no-deps, because
# ai-dynamo's `aisimulate` dependency downloads a wheel at build time, plus the dependencies
# the frontend and mocker import, by hand.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${VENV:-/tmp/portico-compare-venv}
if [ ! -x "$VENV/bin/smg" ] || ! "$VENV/bin/python" -c 'import dynamo.frontend' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check smg
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps ai-dynamo==1.6.1 ai-dynamo-runtime==1.6.1
  "$VENV/bin/pip" install -q --disable-pip-version-check "pydantic>=2.10.6,<=2.13.5" uvloop aiohttp certifi msgspec prometheus-client pyzmq redis tqdm typing-extensions zstandard transformers "kubernetes>=32.0.1,<33"
fi
npm run -s build:ts
unset RUST_BACKTRACE
PARTS=${PARTS:-compare,deploy}
if [[ ",$PARTS," == *,compare,* ]]; then
  node dist/bench/compare/run.js --venv "$VENV" --rounds "${ROUNDS:-1}" --port "${PORT:-28040}" --results bench/RESULTS.md ${ONLY:+--only "$ONLY"}
fi
if [[ ",$PARTS," == *,deploy,* ]]; then
  node dist/bench/compare/deploy-shape.js --venv "$VENV" --rounds "${DEPLOY_ROUNDS:-2}" --port "${DEPLOY_PORT:-28100}" --results bench/RESULTS.md
fi
