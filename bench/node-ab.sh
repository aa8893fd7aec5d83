#!/usr/bin/env bash
# Two Node.js runtimes in one run, rounds alternating (the order flips every round):
#   per request   bench/floor.bench.ts, one round: uWS hello, the floor and Portico's
#                 1-token chat on one shard, with the frontend's CPU per request from /proc
#                 and each target's req/s against uWS hello GET (the serving ratio)
#   per token     bench/stream-floor.sh portico: CPU per streamed token, paced engine
# Each side runs from its own installed tree (better-sqlite3 and uWebSockets.js are built
# per Node ABI), at the same commit. BENCH_PIN=1 / PIN=1 (default): the frontend under test
# on CPU 0, engines and wrk on CPU 1. Not run by CI (minutes of load).
#
# usage: NODE_A=/usr/bin/node DIR_A=/work/tree20 NODE_B=/opt/portico/node-24/bin/node \
#        DIR_B=/work/tree24 ROUNDS=3 bash bench/node-ab.sh
set -euo pipefail
ROUNDS=${ROUNDS:-3} SECONDS_PER=${SECONDS_PER:-5} CONN=${CONN:-64}
export STEP=${STEP:-5} DUR=${DUR:-10} TOK=${TOK:-256} ENGINE_PORT=${ENGINE_PORT:-21500} PORT=${PORT:-21501}
: "${NODE_A:?}" "${DIR_A:?}" "${NODE_B:?}" "${DIR_B:?}"

side() { # label node dir
  local label=$1 node=$2 dir=$3
  echo "## round $r, $label: $("$node" --version) in $dir, load $(cut -d' ' -f1-3 /proc/loadavg)"
  (cd "$dir" && BENCH_PIN=${BENCH_PIN:-1} "$node" dist/bench/floor.bench.js "$SECONDS_PER" 1 "$CONN" | grep -E '^\| (uWS hello|floor|Portico)')
  (cd "$dir" && PATH="$(dirname "$(readlink -f "$node")"):$PATH" bash bench/stream-floor.sh portico | grep '^portico')
}

for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then
    side A "$NODE_A" "$DIR_A"; side B "$NODE_B" "$DIR_B"
  else
    side B "$NODE_B" "$DIR_B"; side A "$NODE_A" "$DIR_A"
  fi
done
