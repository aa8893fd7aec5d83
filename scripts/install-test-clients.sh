#!/usr/bin/env bash
# Installs the Python clients the real-engine tests drive Portico with (Triton's
# tritonclient for the KServe face) into a venv of their own at a machine-level path:
# tritonclient pins a protobuf that vLLM's venv must not be moved to.
# Usage: scripts/install-test-clients.sh [VENV]   (default $PORTICO_CLIENTS_VENV or /opt/portico/clients)
set -euo pipefail
VENV="${1:-${PORTICO_CLIENTS_VENV:-/opt/portico/clients}}"
TRITONCLIENT_VERSION=2.73.0
STAMP="$VENV/.portico-clients-tritonclient-$TRITONCLIENT_VERSION"
if [ -f "$STAMP" ]; then
  echo "test clients already in $VENV"
  exit 0
fi
mkdir -p "$(dirname "$VENV")"
[ -x "$VENV/bin/python" ] || "${PYTHON:-python3}" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "tritonclient[grpc]==$TRITONCLIENT_VERSION"
"$VENV/bin/python" -c "import tritonclient.grpc"
touch "$STAMP"
