#!/usr/bin/env bash
# The CI slice of every fuzzer, bounded to a few minutes in all:
#   1. HTTP: mutated requests against real `portico serve` processes (test/fuzz/http-fuzz.ts)
#   2. the C++ gate under libFuzzer + ASan/UBSan (native/gate/fuzz/fuzz_gate.cc, clang)
#   3. portico-core's parsers, JSON readers, detokenizer and chat readers
#      (native/core/examples/fuzz.rs: deterministic mutation, stable Rust)
# Prints one closing line `fuzz: N passed, M failed`; exits non-zero when M > 0.
# Seeds are fixed so a CI failure reproduces; FUZZ_SEED=... FUZZ_SECONDS=... override.
# Arguments name the parts to run (http, gate, rust; all three when none is given): CI runs
# the HTTP part while the tree is built for the suite's Node, the other two beside a rebuild.
set -uo pipefail
cd "$(dirname "$0")/../.."
SEED="${FUZZ_SEED:-20261201}"
SECS="${FUZZ_SECONDS:-45}"
OUT="${FUZZ_OUT:-/tmp/portico-fuzz-slice}"
PARTS=("$@")
[ ${#PARTS[@]} -eq 0 ] && PARTS=(http gate rust)
for part in "${PARTS[@]}"; do
  case "$part" in http|gate|rust) ;; *) echo "run-slice: unknown part $part (http, gate, rust)" >&2; exit 2 ;; esac
done
wanted() { [[ " ${PARTS[*]} " == *" $1 "* ]]; }
mkdir -p "$OUT"
for part in "${PARTS[@]}"; do rm -rf "${OUT:?}/$part"; done
passed=0
failed=0
step() { # name, command...
  local name="$1"; shift
  wanted "$name" || return 0
  echo "== fuzz slice: $name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: fuzz slice $name"; fi
}

step http node dist/test/fuzz/http-fuzz.js --seconds "$SECS" --inputs 1000000 --seed "$SEED" \
  --out "$OUT/http" --known test/fuzz/known-failures.txt

gate() {
  command -v clang++ >/dev/null || { echo "clang++ not installed (apt-get install -y clang)"; return 1; }
  mkdir -p "$OUT/gate/corpus"
  clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DGATE_LIBFUZZER -DSIMDJSON_EXCEPTIONS=0 -I native/gate -I node_modules/simdjson/simdjson/src \
    native/gate/fuzz/fuzz_gate.cc native/gate/gate_core.cc node_modules/simdjson/simdjson/src/simdjson.cpp \
    -o "$OUT/gate/fuzz_gate" || return 1
  "$OUT/gate/fuzz_gate" -seed="$SEED" -max_total_time="$SECS" -max_len=8192 -artifact_prefix="$OUT/gate/" \
    "$OUT/gate/corpus" native/gate/fuzz/corpus 2>&1 | tail -4
  return "${PIPESTATUS[0]}"
}
step gate gate

step rust cargo run --release -q -p portico-core --example fuzz -- --seconds "$SECS" --seed "$SEED" --out "$OUT/rust"

echo "fuzz: $passed passed, $failed failed (${PARTS[*]}; seed $SEED, ${SECS} s each; findings under $OUT)"
[ "$failed" -eq 0 ]
