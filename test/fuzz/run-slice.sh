#!/usr/bin/env bash
# The CI slice of every fuzzer, bounded to a few minutes in all:
#   1. HTTP: mutated requests against real `portico serve` processes (test/fuzz/http-fuzz.ts)
#   2. the C++ gate under libFuzzer + ASan/UBSan (native/gate/fuzz/fuzz_gate.cc, clang)
#   3. portico-core's parsers, JSON readers, detokenizer and chat readers
#      (native/core/examples/fuzz.rs: deterministic mutation, stable Rust)
# Prints one closing line `fuzz: N passed, M failed`; exits non-zero when M > 0.
# Seeds are fixed so a CI failure reproduces; FUZZ_SEED=... FUZZ_SECONDS=... override.
set -uo pipefail
cd "$(dirname "$0")/../.."
SEED="${FUZZ_SEED:-20261201}"
SECS="${FUZZ_SECONDS:-45}"
OUT="${FUZZ_OUT:-/tmp/portico-fuzz-slice}"
rm -rf "$OUT" && mkdir -p "$OUT"
passed=0
failed=0
step() { # name, command...
  local name="$1"; shift
  echo "== fuzz slice: $name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: fuzz slice $name"; fi
}

step http node dist/test/fuzz/http-fuzz.js --seconds "$SECS" --inputs 1000000 --seed "$SEED" \
  --out "$OUT/http" --known test/fuzz/known-failures.txt

gate() {
  command -v clang++ >/dev/null || { echo "clang++ not installed (apt-get install -y clang)"; return 1; }
  clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DGATE_LIBFUZZER -DSIMDJSON_EXCEPTIONS=0 -I native/gate -I node_modules/simdjson/simdjson/src \
    native/gate/fuzz/fuzz_gate.cc native/gate/gate_core.cc node_modules/simdjson/simdjson/src/simdjson.cpp \
    -o "$OUT/fuzz_gate" || return 1
  mkdir -p "$OUT/gate-corpus"
  "$OUT/fuzz_gate" -seed="$SEED" -max_total_time="$SECS" -max_len=8192 -artifact_prefix="$OUT/" \
    "$OUT/gate-corpus" native/gate/fuzz/corpus 2>&1 | tail -4
  return "${PIPESTATUS[0]}"
}
step gate gate

step rust cargo run --release -q -p portico-core --example fuzz -- --seconds "$SECS" --seed "$SEED" --out "$OUT/rust"

echo "fuzz: $passed passed, $failed failed (http, gate, rust; seed $SEED, ${SECS} s each; findings under $OUT)"
[ "$failed" -eq 0 ]
