#!/usr/bin/env bash
# Wire-compatibility checks against the real protocol stubs (PyPI smg-grpc-proto), vLLM's
# ZMQ format (msgspec/pyzmq), SGLang's own gateway (PyPI smg) and Triton's client (PyPI
# tritonclient[grpc], for the KServe v2 endpoint) and a grpcio SGLang worker (Portico's own
# HTTP/2 engine client against grpc-core), in a venv of their own.
# Needs the TypeScript built (npm run build:ts). Prints one PASS/FAIL line per check and a
# closing "N passed, N failed" line; exits non-zero when any check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
VENV="${PORTICO_INTEROP_VENV:-/tmp/portico-interop-venv}"
bash test/interop/install.sh || exit 1
# The upstream .proto files compare_protos.py checks proto/ against: the ones the installed
# smg-grpc-proto package ships (its wheel carries them beside the generated stubs).
UPSTREAM_PROTO="$("$VENV/bin/python" -c 'import os, smg_grpc_proto; print(os.path.join(os.path.dirname(smg_grpc_proto.__file__), "proto"))')" || exit 1
passed=0
failed=0
for script in compare_protos sglang_interop vllm_interop zmq_interop smg_gateway_interop compare_kserve_proto kserve_interop engine_client_interop; do
  args=()
  [ "$script" = compare_protos ] && args=("$UPSTREAM_PROTO")
  out=$(timeout 300 "$VENV/bin/python" "test/interop/$script.py" "${args[@]}" 2>&1)
  rc=$?
  echo "$out" | grep -E '^(PASS|FAIL)' | sed "s/^/[$script] /"
  p=$(echo "$out" | grep -c '^PASS')
  f=$(echo "$out" | grep -c '^FAIL')
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "[$script] FAIL exited $rc:"
    echo "$out" | tail -5
    f=1
  fi
  passed=$((passed + p))
  failed=$((failed + f))
done
echo "interop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
