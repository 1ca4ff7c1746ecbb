#!/bin/bash
# --teacher-loops LOOPS (refuse, the default here, or cut) on the Combined row's protocol (serve's defaults, 8 versions x 16 rated
# turns), the learning arm only, one persona-seed at a time, named "combine" so that
# `clawrl bench compare --rescore bench/results/combined-pool/P-sS OUT/P-sS` pairs each run with
# the pool's (the runs repeat the pool's answer for answer until the first loop refused). From
# the repository root:
#
#   go build -o /tmp/clawrl ./cmd/clawrl
#   RUNS='french:2 french:6' LOOPS=cut BIN=/tmp/clawrl OUT=/tmp/loops bash bench/results/2026-12-06-unfinished/loops.sh
#
# (The refuse runs kept here were made with --teacher-refuse-loops, the same
# as --teacher-loops refuse.)
BIN=${BIN:-clawrl}
OUT=${OUT:-loops}
LOOPS=${LOOPS:-refuse}
mkdir -p "$OUT"
for PS in ${RUNS:-french:2 french:6}; do
  P=${PS%%:*}; S=${PS##*:}
  nice -n 5 "$BIN" bench learn --target=defaults --personas "$P" --seeds 1 --first-seed "$S" --keep-data \
    --arms "combine:combine:--teacher-url={teacher}:--teacher-model=clawrl:--teacher-loops=$LOOPS" \
    --out "$OUT/$P-s$S" > "$OUT/$P-s$S.log" 2>&1
  echo "$P-s$S done $(date +%T)"
done
echo done
