#!/bin/bash
# Seeds no default was chosen on: the Combined row's protocol (serve's defaults, 8 versions x 16
# rated turns) at seeds 7 and up, one persona-seed at a time, on the CPU the pool was recorded on
# (a Zen 4). Run from the repository root:
#
#   go build -o /tmp/clawrl ./cmd/clawrl
#   RUNS='concise:7 tldr:7 signoff:7 french:7' BIN=/tmp/clawrl OUT=/tmp/seeds7 bash bench/results/2026-12-06-seeds7/run.sh
#
# Seeds 7 and 8 were run on 2026-12-06 (sessions 74-75), seed 9 in session 78 (RUNS='concise:9 tldr:9 signoff:9 french:9').
BIN=${BIN:-clawrl}
OUT=${OUT:-seeds7}
mkdir -p "$OUT"
for PS in ${RUNS:-concise:7 tldr:7 signoff:7 french:7}; do
  P=${PS%%:*}; S=${PS##*:}
  nice -n 5 "$BIN" bench learn --target=defaults --personas "$P" --seeds 1 --first-seed "$S" --keep-data \
    --out "$OUT/$P-s$S" > "$OUT/$P-s$S.log" 2>&1
  echo "$P-s$S done $(date +%T)"
done
echo done
