#!/bin/bash
# 16 rated turns sent at once (paced.py with no pause) to a fresh `clawrl serve` of the demo model,
# one server per setting, each in its own folder (OUT/NAME: serve.log, paced.out, the teacher's log
# under data/teacher). The eighty-ninth session's runs (BENCHMARKS.md, "Teacher answers written
# eight at a time"), from the repository root, with the 1.5B in the model cache:
#
#   go build -o /tmp/clawrl ./cmd/clawrl
#   BIN=/tmp/clawrl OUT=/tmp/burst bash bench/results/2026-12-07-burst/run.sh
#
# RUNS lists NAME:FLAGS, the flags comma-separated (default: --teacher-concurrency 2, 4, 8, 16 with
# the 1.5B as teacher, and 2 and 8 with the demo model as its own teacher). The folders c2 … own-c8
# ran on a2e6182's tree with its default still at 4, each naming its setting (c8b and c16b again,
# alone); share-c8, share-c8b and share-own-c8 on
# 9c784be (a best-of-N's prompt prefilled once) with RUNS='share-c8:--teacher-concurrency=8
# share-c8b:--teacher-concurrency=8 share-own-c8:--teacher-serve='; pace10 on 9c784be is
# paced.py URL 10 against a plain `clawrl serve --data D`.
BIN=${BIN:-clawrl}
OUT=${OUT:-burst}
HERE=$(cd "$(dirname "$0")" && pwd)
RUNS=${RUNS:-c2:--teacher-concurrency=2 c4:--teacher-concurrency=4 c8:--teacher-concurrency=8 c16:--teacher-concurrency=16 own-c2:--teacher-serve=,--teacher-concurrency=2 own-c8:--teacher-serve=,--teacher-concurrency=8}
PORT=31200
for R in $RUNS; do
  NAME=${R%%:*}; IFS=, read -r -a FLAGS <<< "${R#*:}"
  D=$OUT/$NAME; rm -rf "$D"; mkdir -p "$D"; PORT=$((PORT+1))
  nice -n 5 "$BIN" serve --data "$D/data" --addr 127.0.0.1:$PORT --log-level info "${FLAGS[@]}" > "$D/serve.log" 2>&1 &
  SP=$!
  for _ in $(seq 1 120); do curl -s 127.0.0.1:$PORT/healthz > /dev/null && break; sleep 1; done
  python3 "$HERE/../2026-12-07-paced/paced.py" http://127.0.0.1:$PORT 0 > "$D/paced.out" 2>&1
  echo "$NAME: $(tail -1 "$D/paced.out")"
  kill $SP; wait $SP; sleep 3
done
