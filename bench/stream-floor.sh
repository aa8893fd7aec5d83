#!/usr/bin/env bash
# CPU per streamed token of streaming frontends side by side against ONE mock engine:
#   floor    bench/stream-floor-server.ts (the architecture's floor: no tokenizer, no JSON)
#   portico  this tree's `portico serve`, one shard
#   smg      SGLang's gateway (PyPI smg; VENV as bench/compare/run.sh makes it)
# Each frontend is pinned to CPU 0, the engine and wrk to CPU 1; wrk -c$CONN keeps $CONN
# streams of $TOK tokens open for $DUR s after a 2 s warm-up. The figure is the frontend
# process's utime+stime from /proc over the measured run, divided by the tokens it
# streamed (its fixed cost per request included: a few hundred µs over $TOK tokens).
# STEP is the engine's decode step in ms: 0 streams as fast as the engine can (the frontend
# near saturation), 5 is the production shape (one token per stream per step, the
# frontend asleep between steps). Not run by CI (a minute of load per frontend).
#
# SHARDS sets Portico's --shards (default 1); PIN=0 runs everything unpinned.
#
# usage: STEP=5 DUR=10 TOK=256 CONN=64 bash bench/stream-floor.sh floor portico smg portico floor smg
set -euo pipefail
cd "$(dirname "$0")/.."
STEP=${STEP:-5} DUR=${DUR:-10} TOK=${TOK:-256} CONN=${CONN:-64}
VENV=${VENV:-/tmp/portico-compare-venv}
SHARDS=${SHARDS:-1}
if [ "${PIN:-1}" = 0 ]; then FE=(); SIDE=(); else FE=(taskset -c 0); SIDE=(taskset -c 1); fi
ENGINE_PORT=${ENGINE_PORT:-28500} PORT=${PORT:-28501}
WORK=$(mktemp -d)
npm run -s build:ts
MODEL_DIR=$(node -e "import('./dist/bench/serve-procs.js').then(async (s) => { const m = await import('./dist/bench/compare/model-dir.js'); console.log(m.makeModelDir(s.QWEN3, '$WORK')); })")
MODEL=$(basename "$MODEL_DIR")
cat > "$WORK/stream.lua" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"$MODEL","messages":[{"role":"user","content":"Hello there, how are you today?"}],"max_tokens":$TOK,"stream":true,"ignore_eos":true}'
EOF

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

"${SIDE[@]}" node bin/portico.js mock-engine --model-path "$MODEL_DIR" --port "$ENGINE_PORT" --mode sim --eos-probability 0 --max-num-seqs 4096 --step-ms "$STEP" --prefill-ms-per-token 0 --decode-ms-per-seq 0 --decode-ms-per-kv-token 0 > "$WORK/engine.log" 2>&1 &
PIDS+=($!)

for F in "$@"; do
  case $F in
    floor) "${FE[@]}" node dist/bench/stream-floor-server.js "$PORT" "$ENGINE_PORT" > "$WORK/fe.log" 2>&1 & ;;
    portico) NODE_OPTIONS="${PORTICO_NODE_OPTIONS:-}" "${FE[@]}" node bin/portico.js serve --host 127.0.0.1 --http-port "$PORT" --model-path "$MODEL_DIR" --model-name "$MODEL" --worker "grpc://127.0.0.1:$ENGINE_PORT" --shards "$SHARDS" --log-level error ${PORTICO_ARGS:-} > "$WORK/fe.log" 2>&1 & ;;
    smg) "${FE[@]}" "$VENV/bin/smg" launch --host 127.0.0.1 --port "$PORT" --prometheus-port "$((PORT + 1))" --worker-urls "grpc://127.0.0.1:$ENGINE_PORT" --model-path "$MODEL_DIR" --tokenizer-path "$MODEL_DIR" --backend sglang --policy round_robin --reasoning-parser passthrough --log-level error > "$WORK/fe.log" 2>&1 & ;;
    *) echo "unknown frontend $F (floor | portico | smg)" >&2; exit 2 ;;
  esac
  FP=$!
  PIDS+=("$FP")
  ready=
  for _ in $(seq 1 200); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' -d "{\"model\":\"$MODEL\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":1}" "http://127.0.0.1:$PORT/v1/chat/completions" 2>/dev/null || true)
    if [ "$code" = 200 ]; then ready=1; break; fi
    sleep 0.3
  done
  if [ -z "$ready" ]; then echo "$F did not answer; its log:" >&2; tail -20 "$WORK/fe.log" >&2; exit 1; fi
  "${SIDE[@]}" wrk -t1 -c"$CONN" -d2s -s "$WORK/stream.lua" "http://127.0.0.1:$PORT/v1/chat/completions" > /dev/null
  T0=$(awk '{print $14+$15}' "/proc/$FP/stat")
  OUT=$("${SIDE[@]}" wrk -t1 -c"$CONN" -d"${DUR}s" -s "$WORK/stream.lua" "http://127.0.0.1:$PORT/v1/chat/completions")
  T1=$(awk '{print $14+$15}' "/proc/$FP/stat")
  N=$(echo "$OUT" | awk '/requests in/{print $1}')
  BAD=$(echo "$OUT" | awk '/Non-2xx|Socket errors/' | tr -s ' ' | tr '\n' ' ')
  TICK=$(getconf CLK_TCK)
  echo "$F shards=$SHARDS pin=${PIN:-1} step=${STEP}ms tok=$TOK conn=$CONN streams=$N cpu_s=$(echo "($T1-$T0)/$TICK" | bc -l | cut -c1-5) us_per_token=$(echo "($T1-$T0)*1000000/$TICK/($N*$TOK)" | bc -l | cut -c1-5) load=$(cut -d' ' -f1 /proc/loadavg) $BAD"
  kill "$FP"; wait "$FP" 2>/dev/null || true
done
