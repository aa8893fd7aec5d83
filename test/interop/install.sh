#!/usr/bin/env bash
# Installs the Python side of the wire-compatibility checks (PyPI smg-grpc-proto stubs, grpcio,
# msgspec/pyzmq for vLLM's ZMQ format, SGLang's gateway smg, Triton's client) into a venv of
# their own. run.sh calls it; CI calls it early, in the background, while the native parts build.
# Usage: test/interop/install.sh   (venv at $PORTICO_INTEROP_VENV or /tmp/portico-interop-venv)
set -uo pipefail
VENV="${PORTICO_INTEROP_VENV:-/tmp/portico-interop-venv}"
PACKAGES=(smg-grpc-proto==0.4.28 grpcio msgspec pyzmq smg 'tritonclient[grpc]==2.73.0')
STAMP="$VENV/.portico-interop-$(printf '%s ' "${PACKAGES[@]}" | cksum | cut -d' ' -f1)"
[ -f "$STAMP" ] && exit 0
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV" || exit 1
fi
for attempt in 1 2 3; do
  "$VENV/bin/pip" install -q --disable-pip-version-check "${PACKAGES[@]}" && touch "$STAMP" && exit 0
  [ "$attempt" = 3 ] && exit 1
  sleep 5
done
